#!/bin/sh
# The report's glossary (templates/summary.tmpl): every symbol and term the report of
# configs/examples.csv uses has its entry there, and the report names the lesson it follows.
. tests/cli/common.inc

expect_status "the examples' report: exit 0" 0 report configs/examples.csv -o "$T/r"
pdftotext -f 2 -l 2 "$T/r/report.pdf" - | tr -s ' \n' '  ' >"$T/glossary"
pdftotext -f 3 "$T/r/report.pdf" - | tr -s ' \n' '  ' >"$T/body"
pdftotext -f 1 -l 1 "$T/r/report.pdf" - | tr -s ' \n' '  ' >"$T/summary"
check "page 2 is the glossary" grep -qF 'Glossary The symbols and words of the report' "$T/glossary"
check "the summary names the lesson by its title" grep -qF \
    'the lesson "Training memory: model states, activations and checkpointing"' "$T/summary"
check "no 'lesson's sum' left" sh -c "! grep -qF \"lesson's sum\" '$T/body' '$T/summary'"

# USED|ENTRY: where the body says USED, the glossary has an item starting with ENTRY.
while IFS='|' read -r used entry; do
    [ -n "$used" ] || continue
    if grep -qF -- "$used" "$T/body"; then
        check "'$used' is used and '$entry' defined" grep -qF -- "• $entry" "$T/glossary"
    else
        echo "not ok '$used' is no longer in the report: update tests/cli/glossary.sh"
    fi
done <<'LIST'
Ψ =|Ψ:
the static sum|the static sum:
 sbh|sbh, sbf, asb, as²b:
as²b|sbh, sbf, asb, as²b:
L = |s, b, h: tokens per sequence, sequences per micro-batch, hidden size. a, L, V, f:
2 B ×|B, GB:
A = |A, A_dense:
A_dense|A, A_dense:
c = 2sbh|c: one checkpoint
M(k)|k, M(k):
k* =|k*:
micro-batches × L/pp|m:
dp=|dp, tp (t), pp, cp, vpp, sp:
/ t |dp, tp (t), pp, cp, vpp, sp:
ZeRO-3|ZeRO-1, ZeRO-2, ZeRO-3 (FSDP), HSDP:
E = |E, top k, f_e, f_s:
f_e =|E, top k, f_e, f_s:
T = |E, top k, f_e, f_s:
edp|ep, etp, edp:
etp·ep|ep, etp, edp:
routed (params|dense, routed:
R = |R:
rung|rung:
FP8|FP8, MXFP8, LoRA, QLoRA, NF4:
QLoRA|FP8, MXFP8, LoRA, QLoRA, NF4:
budget|peak, budget, reserve:
LIST
