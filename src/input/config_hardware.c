/*
 * config_hardware: the GPU of a row (config_internal.h): its memory (gpu_mem_gb, or the GPU
 * preset's capacity as the device reports it), reserve, and FP8 against what the GPU preset says
 * it supports.
 */
#include "input/config_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* The capacity of the row's GPU preset as the device reports it (its mem_mib, 2^20 bytes each),
 * unless the row writes its own gpu_mem_gb (10^9 bytes per GB); false when there is none. */
static bool gpu_preset_capacity(const struct row *row, uint64_t *bytes)
{
    if (!row->gpu || !(row->gpu->mem_mib > 0) ||
        (row->cell[COL_GPU_MEM_GB] && !config_cell_preset(row, COL_GPU_MEM_GB)))
        return false;
    *bytes = (uint64_t)nearbyint(row->gpu->mem_mib * 1048576.0);
    return true;
}

/* The row's gpu_mem_gb (its own, or the GPU preset's mem_gb), 10^9 bytes per GB. */
static bool parse_gpu_mem_gb(struct row *row, struct scenario *sc)
{
    double gb = 0;
    if (!config_require(row, COL_GPU_MEM_GB) || !config_parse_double(row, COL_GPU_MEM_GB, &gb))
        return false;
    if (gb <= 0)
        return config_row_error(row, COL_GPU_MEM_GB, "'%s' must be a positive number of GB",
                                row->cell[COL_GPU_MEM_GB]);
    if (gb * 1e9 >= 1.8e19)
        return config_row_error(row, COL_GPU_MEM_GB, "'%s' is too large",
                                row->cell[COL_GPU_MEM_GB]);
    sc->gpu_mem_bytes = (uint64_t)nearbyint(gb * 1e9);
    return true;
}

bool config_parse_gpu(struct row *row, struct scenario *sc)
{
    if (!gpu_preset_capacity(row, &sc->gpu_mem_bytes) && !parse_gpu_mem_gb(row, sc))
        return false;
    if (row->cell[COL_RESERVE]) {
        if (!config_parse_double(row, COL_RESERVE, &sc->reserve))
            return false;
        if (!(sc->reserve >= 0 && sc->reserve < 1))
            return config_row_error(row, COL_RESERVE, "'%s' is outside [0, 1)",
                                    row->cell[COL_RESERVE]);
    }
    return true;
}

/*
 * FP8 training (doc/model.md sections 3.7, 4.10 and 13.2): the GPU preset must have FP8 tensor
 * cores (Ada, Hopper, Blackwell), and MXFP8 is Blackwell's (Transformer Engine's mxfp8 docs:
 * SM 10.0); a row without a GPU preset, or whose preset leaves a cell empty, is not checked. A
 * frozen base (LoRA, QLoRA, precision frozen) in FP8 is not modelled. Also notes whether the
 * GPU's FP8 GEMMs read one copy of a weight both ways (Blackwell).
 */
bool config_check_fp8(struct row *row, struct scenario *sc)
{
    const struct preset *g = row->gpu;
    const char *v = row->cell[COL_FP8];
    sc->fp8_one_copy = g && g->flag[GPU_FLAG_FP8_ONE_COPY] == GPU_FLAG_YES;
    if (sc->fp8 == FP8_NONE)
        return true;
    if (g && g->flag[GPU_FLAG_FP8] == GPU_FLAG_NO)
        return config_row_error(
            row, COL_FP8,
            "'%s' needs FP8 tensor cores (Ada, Hopper or Blackwell): GPU '%s' has "
            "none",
            v, g->name);
    if (sc->fp8 == FP8_MXFP8 && g && g->flag[GPU_FLAG_MXFP8] == GPU_FLAG_NO)
        return config_row_error(row, COL_FP8, "'%s' needs a Blackwell GPU: GPU '%s' has no MXFP8",
                                v, g->name);
    if (sc->finetune != FINETUNE_FULL || sc->precision == PRECISION_FROZEN)
        return config_row_error(row, COL_FP8,
                                "'%s' is not modelled with a frozen base (finetune lora or qlora, "
                                "precision frozen)",
                                v);
    return true;
}
