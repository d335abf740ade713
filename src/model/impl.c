/* impl: see impl.h. The choices and the framework source deciding each: doc/model.md 4.12. */
#include "model/impl.h"

static const struct impl_profile profiles[IMPL_COUNT] = {
    /* name, norm_upcast, softmax_fp32, repeat_kv, swiglu_fused, probs_in_act, argsort_permute,
     * adapter_casts, split_casts */
    [IMPL_MEMFIT] = {"memfit", false, false, false, false, false, false, false, false},
    /* Megatron-Core as main at d98e8a6 (2026-08) runs it, with Transformer Engine: fused norms
     * (TE's LayerNormLinear keeps the input, the output and an fp32 1/rms, as memfit's),
     * fused_bias_swiglu.py's SwiGLUFunction and, in the experts (moe/experts.py), its
     * WeightedSwiGLUFunction (the routing probabilities applied there; core_v0.12.1 on),
     * moe_utils.py's permute (an argsort; core_v0.17.0 on) and unpermute without the
     * probabilities (scatter_add_). */
    [IMPL_MEGATRON] = {"megatron", false, false, false, true, true, true, false, false},
    /* transformers' modeling_llama.py: LlamaRMSNorm, eager_attention_forward, repeat_kv. */
    [IMPL_HF] = {"hf", true, true, true, false, false, false, false, true},
    /* and peft/tuners/lora/layer.py's Linear.forward (fp32 adapters, autocast). */
    [IMPL_HF_PEFT] = {"hf-peft", true, true, true, false, false, false, true, true},
};

const struct impl_profile *impl_profile(enum impl impl)
{
    return (unsigned)impl < IMPL_COUNT ? &profiles[impl] : &profiles[IMPL_MEMFIT];
}

const char *impl_name(enum impl impl)
{
    return impl_profile(impl)->name;
}

const char *impl_attention_name(const struct scenario *sc)
{
    if (sc->impl != IMPL_HF && sc->impl != IMPL_HF_PEFT)
        return scenario_attention_name(sc->attention);
    if (sc->attention != ATTENTION_FLASH)
        return "eager";
    return sc->sdpa ? "sdpa" : "flash_attention_2";
}
