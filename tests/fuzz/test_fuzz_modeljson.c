/*
 * A deterministic fuzz run of the config.json path (tests/fuzz/fuzz_modeljson.h): the published
 * configs of modeljson_seeds.h, each mutated 1,500 times by byte flips, deletions and
 * insertions of JSON tokens and of the fields the mapping reads, with a fixed-seed generator; then
 * random bytes. Run under ASan/UBSan and valgrind by CI.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#define FUZZ_FAIL(...) fail_msg(__VA_ARGS__)
#include "fuzz_modeljson.h"

#include "mutate.h"

static const char *const tokens[] = {
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "null",
    "true",
    "false",
    "0",
    "-1",
    "1.5",
    "1e400",
    "99999999999999999999",
    "\\u0000",
    "\xff",
    "\"model_type\": \"llama\",",
    "\"model_type\": \"deepseek_v3\",",
    "\"hidden_size\": ",
    "\"head_dim\": null,",
    "\"num_key_value_heads\": 3,",
    "\"num_experts\": 0,",
    "\"mlp_only_layers\": [0, 1],",
    "\"mlp_only_layers\": [2],",
    "\"decoder_sparse_step\": 2,",
    "\"q_lora_rank\": null,",
    "\"n_shared_experts\": 9223372036854775807,",
    "\"rope_scaling\": {\"type\": \"mrope\"},",
    "\"rope_parameters\": {\"full_attention\": {\"rope_type\": \"yarn\"}},",
    "\"layer_types\": [\"sliding_attention\", \"chunked_attention\"],",
    "\"attention_bias\": true,",
    "\"topk_method\": \"greedy\",",
};
static struct mutator mut = {0x2545f4914f6cdd1dull, tokens, sizeof tokens / sizeof tokens[0]};

#define MUTATIONS_PER_SEED 1500

static void mutated_configs_never_crash(void **state)
{
    (void)state;
    char buf[4096];
    int valid = 0;
    for (size_t s = 0; s < MODELJSON_SEEDS; s++) {
        const char *seed = modeljson_seeds[s].json;
        size_t base = strlen(seed);
        valid += fuzz_modeljson_one((const uint8_t *)seed, base);
        for (int i = 0; i < MUTATIONS_PER_SEED; i++) {
            size_t len = mutator_derive(&mut, seed, base, buf, sizeof buf, 4);
            fuzz_modeljson_one((const uint8_t *)buf, len);
        }
    }
    /* The unmutated seeds map, and each gives its three valid scenarios (so the target really
     * merges and evaluates), but gemma-3-1b, whose one KV head does not split over tp = 2. */
    assert_int_equal(valid, 3 * (int)MODELJSON_SEEDS - 1);
}

static void random_bytes_never_crash(void **state)
{
    (void)state;
    uint8_t buf[256];
    for (int i = 0; i < 2000; i++) {
        size_t len = mutator_next(&mut) % sizeof buf;
        for (size_t k = 0; k < len; k++)
            buf[k] = (uint8_t)mutator_next(&mut);
        if (len && i % 2) /* half of them start as an object */
            buf[0] = '{';
        fuzz_modeljson_one(buf, len);
    }
}

static int teardown(void **state)
{
    (void)state;
    fuzz_modeljson_cleanup();
    config_presets_free(fuzzj_presets);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mutated_configs_never_crash),
        cmocka_unit_test(random_bytes_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
