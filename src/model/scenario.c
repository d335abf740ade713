/* scenario: see scenario.h. */
#include "model/scenario.h"

#include <stdio.h>
#include <string.h>

void scenario_lesson_example(struct scenario *sc)
{
    /* doc/model.md section 9: L = 24, h = 2048, a = 16, V = 50257, s = 2048, b = 8, rotary
     * positions, tied embedding, mixed-precision Adam, plain attention, one 80 GB GPU. */
    memset(sc, 0, sizeof *sc);
    snprintf(sc->name, sizeof sc->name, "%s", "lesson-1.3b");
    sc->arch = ARCH_GPT;
    sc->layers = 24;
    sc->hidden = 2048;
    sc->heads = 16;
    sc->kv_heads = 16;
    sc->layer_norms = 2;
    sc->vocab = 50257;
    sc->ffn = 4 * 2048;
    sc->tied = true;
    sc->dropout = true;
    sc->seq = 2048;
    sc->micro_batch = 8;
    sc->global_batch = 8;
    sc->precision = PRECISION_MIXED;
    sc->attention = ATTENTION_PLAIN;
    sc->recompute = RECOMPUTE_NONE;
    sc->dp = sc->tp = sc->pp = 1;
    sc->cp = sc->vpp = 1;
    sc->ep = 1;
    sc->lora_rank = 16;
    sc->gpu_mem_bytes = 80000000000ull;
    sc->reserve = 0.15;
    sc->gpus_per_node = 8;
}

const char *scenario_precision_name(enum precision p)
{
    static const char *const names[] = {"mixed", "autocast", "megatron", "frozen", "fp32"};
    return (unsigned)p < 5 ? names[p] : "?";
}

const char *scenario_attention_name(enum attention a)
{
    return a == ATTENTION_FLASH ? "flash" : "plain";
}

const char *scenario_fp8_name(enum fp8 f)
{
    static const char *const names[] = {"none", "tensor", "mxfp8"};
    return (unsigned)f < 3 ? names[f] : "?";
}

const char *scenario_recompute_module_name(unsigned i)
{
    static const char *const names[RECOMPUTE_MODULES] = {
        "core_attn", "layernorm", "mlp", "moe_act", "moe", "shared_experts", "mla_up_proj"};
    return i < RECOMPUTE_MODULES ? names[i] : "?";
}

const char *scenario_recompute_modules_name(const struct scenario *sc, char *buf,
                                            unsigned long size)
{
    unsigned m = scenario_recompute_modules(sc);
    size_t len = 0;
    if (size == 0)
        return "";
    buf[0] = '\0';
    if (m == 0 || m == RECOMPUTE_CORE_ATTN)
        return buf;
    for (unsigned i = 0; i < RECOMPUTE_MODULES; i++) {
        if (!(m >> i & 1u))
            continue;
        int n = snprintf(buf + len, size - len, "%s%s", len ? "+" : "",
                         scenario_recompute_module_name(i));
        if (n < 0 || (size_t)n >= size - len)
            break;
        len += (size_t)n;
    }
    return buf;
}

const char *scenario_schedule_name(enum schedule s)
{
    static const char *const names[] = {"1f1b", "zb1p", "dualpipe"};
    return (unsigned)s < 3 ? names[s] : "?";
}

const char *scenario_recompute_name(const struct scenario *sc, char *buf, unsigned long size)
{
    if (sc->recompute == RECOMPUTE_NONE)
        return "none";
    if (sc->recompute == RECOMPUTE_SELECTIVE)
        return "selective";
    if (sc->ckpt_every == 1)
        return "full";
    snprintf(buf, size, "%llu", (unsigned long long)sc->ckpt_every);
    return buf;
}
