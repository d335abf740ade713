/*
 * A deterministic fuzz run of the CSV path (tests/fuzz/fuzz_csv.h): seeds from configs/ and the
 * bad-input classes, each mutated thousands of times by byte flips, insertions, deletions and
 * splices with a fixed-seed generator. Run under ASan/UBSan and valgrind by CI.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

/* An accepted row that cannot be evaluated, planned or charted fails the run. */
#define FUZZ_FAIL(...) fail_msg(__VA_ARGS__)
#include "fuzz_csv.h"

#include "mutate.h"

static const char *const tokens[] = {
    ",",     "\"", "\n",           "\r\n",  "0",     "-1", "99999999999999999999",
    "1e400", " ",  "\xEF\xBB\xBF", "llama", "flash", ""};
static struct mutator mut = {0x9e3779b97f4a7c15ull, tokens, sizeof tokens / sizeof tokens[0]};

static const char *const seeds[] = {
    "name,model,seq,micro_batch,gpu\nx,gpt-1.3b,2048,8,H100-80GB\n",
    "name,layers,hidden,heads,vocab,seq,micro_batch,gpu_mem_gb,tp,pp,dp,zero,recompute,attention\n"
    "a,24,2048,16,50257,2048,8,80,2,4,8,3,2,flash\nb,24,2048,16,50257,2048,8,80,1,1,1,0,full,"
    "plain\n",
    "\xEF\xBB\xBFname,model,seq,micro_batch,gpu_mem_gb\r\n\"q,\"\"x\",llama2-70b,4096,1,80\r\n",
    "name,model,seq,micro_batch,gpu_mem_gb,reserve,offload,sp,tp\n\"multi\nline\",llama3-8b,8192,2,"
    "24,0.5,optimizer,yes,8\n",
    "name,seq\n\"unterminated,1\n",
    /* Accepted once, then the ladder overflowed: full checkpointing brings back the 5as^2b that
     * selective recomputation drops. */
    "name,layers,hidden,heads,vocab,seq,micro_batch,recompute,gpu_mem_gb\n"
    "big,24,16,16,32000,600000000,2,selective,80\n",
};

#define MUTATIONS_PER_SEED 3000

static void mutated_csv_never_crashes(void **state)
{
    (void)state;
    char buf[1024];
    int valid = 0;
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        size_t base = strlen(seeds[s]);
        valid += fuzz_csv_one((const uint8_t *)seeds[s], base);
        for (int i = 0; i < MUTATIONS_PER_SEED; i++) {
            size_t len = mutator_derive(&mut, seeds[s], base, buf, sizeof buf, 6);
            fuzz_csv_one((const uint8_t *)buf, len);
        }
    }
    /* The unmutated seeds give their valid scenarios (so the target really evaluates). */
    assert_int_equal(valid, 5);
}

static void random_bytes_never_crash(void **state)
{
    (void)state;
    uint8_t buf[256];
    for (int i = 0; i < 2000; i++) {
        size_t len = mutator_next(&mut) % sizeof buf;
        for (size_t k = 0; k < len; k++)
            buf[k] = (uint8_t)mutator_next(&mut);
        fuzz_csv_one(buf, len);
    }
}

static int teardown(void **state)
{
    (void)state;
    config_presets_free(fuzz_presets);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mutated_csv_never_crashes),
        cmocka_unit_test(random_bytes_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
