/*
 * A deterministic fuzz run of the whole pipeline (tests/fuzz/fuzz_pipeline.h): CSV to eval's rows,
 * the report's values and its charts' geometry. Seeds from the examples and the edges (the
 * largest counts config accepts, a million layers, pipelines, experts, latent attention), each
 * mutated with a fixed-seed generator. Run under ASan/UBSan and valgrind by CI.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

/* Any accepted scenario that fails a step of the pipeline fails the run. */
#define FUZZ_FAIL(...) fail_msg(__VA_ARGS__)
#include "fuzz_pipeline.h"

#include "mutate.h"

static const char *const tokens[] = {",",    "\"",        "\n",    "0", "1",    "9",
                                     "-1",   "99999",     "1e10",  " ", "\x1b", "flash",
                                     "full", "selective", "llama", ""};
static struct mutator mut = {0x6a09e667f3bcc908ull, tokens, sizeof tokens / sizeof tokens[0]};

static const char *const seeds[] = {
    "name,model,seq,micro_batch,gpu\nx,gpt-1.3b,2048,8,H100-80GB\n",
    "name,layers,hidden,heads,vocab,seq,micro_batch,gpu_mem_gb,tp,pp,dp,zero,recompute,attention\n"
    "a,24,2048,16,50257,2048,8,80,2,4,8,3,2,flash\nb,24,2048,16,50257,2048,8,80,1,1,1,0,full,"
    "plain\n",
    "name,model,seq,micro_batch,gpu,dp,ep,tp\nm,mixtral-8x7b,4096,1,H100-80GB,8,8,1\n",
    "name,model,seq,micro_batch,gpu,dp,ep,pp\nd,deepseek-v3,4096,1,H100-80GB,64,64,1\n",
    /* A million layers, and the largest byte counts config accepts (the ladder's and the
     * comparison step's included). */
    "name,layers,hidden,heads,vocab,seq,micro_batch,recompute,gpu_mem_gb\n"
    "deep,1000000,64,4,1000,16,1,none,80\n"
    "edge,24,16,16,32000,60000000,2,selective,80\n",
    "name,layers,hidden,heads,vocab,seq,micro_batch,recompute,gpu_mem_gb\n"
    "x,8,64,64,1,1,4294967296,8,1e10\n",
};

#define MUTATIONS_PER_SEED 400

static void mutated_pipelines_hold(void **state)
{
    (void)state;
    char buf[1024];
    int valid = 0;
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        size_t base = strlen(seeds[s]);
        valid += fuzz_pipeline_one((const uint8_t *)seeds[s], base);
        for (int i = 0; i < MUTATIONS_PER_SEED; i++) {
            size_t len = mutator_derive(&mut, seeds[s], base, buf, sizeof buf, 4);
            fuzz_pipeline_one((const uint8_t *)buf, len);
        }
    }
    assert_true(valid >= 8); /* the seeds do reach the report */
}

static int teardown(void **state)
{
    (void)state;
    fuzz_pipe_release();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mutated_pipelines_hold),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
