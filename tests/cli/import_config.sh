#!/bin/sh
# config.json files as models (doc/memfit.1: COMMANDS import-config, THE SCENARIO CSV model;
# doc/model.md section 13.3): import-config's table and exit status, a config.json named in the
# model column, the message of a file that gives no model. The published configs of every
# supported model_type are tested in tests/input/test_modeljson.c.
. tests/cli/common.inc

mkdir -p "$T/tiny" "$T/odd"
cat >"$T/tiny/config.json" <<'JSON'
{
  "model_type": "qwen2",
  "num_hidden_layers": 2,
  "hidden_size": 64,
  "num_attention_heads": 4,
  "num_key_value_heads": 2,
  "intermediate_size": 128,
  "vocab_size": 1000,
  "tie_word_embeddings": true,
  "use_sliding_window": true,
  "sliding_window": 32
}
JSON
printf '{"model_type": "xlnet", "hidden_size": 64}\n' >"$T/odd/config.json"
printf '{"model_type": "llama", "num_hidden_layers": 2}\n' >"$T/nohidden.json"

# ---- import-config ----
expect_status "import-config of a folder" 0 import-config "$T/tiny"
check "import-config prints a models table" test "$(cat "$T/out")" = "$(printf '%s\n%s' \
"name,arch,layers,hidden,heads,kv_heads,vocab,ffn,tied,positions,dropout,head_dim,qkv_bias,qk_norm,layer_norms,experts,top_k,expert_ffn,shared_ffn,shared_gate,router_bias,dense_layers,q_lora_rank,kv_lora_rank,qk_nope_dim,qk_rope_dim,v_head_dim,source" \
"tiny,llama,2,64,4,2,1000,128,yes,,,,yes,,,,,,,,,,,,,,,$T/tiny/config.json (model_type qwen2; transformers models/qwen2/modeling_qwen2.py)")"
cp "$T/out" "$T/mine.csv"

expect_status "a file memfit cannot map: exit 1" 1 import-config "$T/tiny/config.json" "$T/odd"
expect_err "its message names the file" \
    "memfit: $T/odd/config.json: model_type 'xlnet' is not supported (supported: gpt2, llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, deepseek_v3, deepseek_v2, phi3, gemma3_text, gemma3, olmo2, gpt_oss, granite)"
check "the other files are still printed" test "$(grep -c '^tiny,' "$T/out")" -eq 1

expect_status "an unreadable file: exit 2" 2 import-config "$T/tiny" "$T/nowhere.json"
expect_err "cannot open" "memfit: $T/nowhere.json: cannot open: No such file or directory"
expect_status "import-config without a file: exit 2" 2 import-config
expect_err "says what it needs" "import-config: at least one config.json"
expect_status "memfit help import-config" 0 help import-config
expect_out "its usage" "usage: memfit import-config CONFIG.json..."

# ---- config.json in the model column ----
cat >"$T/runs.csv" <<CSV
name,model,seq,micro_batch,gpu_mem_gb,kv_heads
folder,$T/tiny,512,2,80,
file,$T/tiny/config.json,512,2,80,
missing-field,$T/nohidden.json,512,2,80,
unsupported,$T/odd/,512,2,80,
override,$T/tiny,512,2,80,4
preset,llama3-8b,512,2,80,
CSV
expect_status "a bad config.json rejects its row: exit 1" 1 eval "$T/runs.csv"
expect_err "missing field: FILE:LINE, column, file, field" \
    "memfit: $T/runs.csv:4: column 'model': $T/nohidden.json: field 'hidden_size' is missing (required for model_type 'llama')"
expect_err "unknown model_type" \
    "memfit: $T/runs.csv:5: column 'model': $T/odd/config.json: model_type 'xlnet' is not supported"
check "the other rows are evaluated" test "$(cut -d, -f1 "$T/out" | tr '\n' ' ')" = \
    "name folder file override preset "
check "a folder and its config.json give the same row" \
    test "$(sed -n 's/^folder,//p' "$T/out")" = "$(sed -n 's/^file,//p' "$T/out")"
check "an explicit column wins over the file" \
    test "$(sed -n 's/^folder,//p' "$T/out")" != "$(sed -n 's/^override,//p' "$T/out")"

# import-config's table as --models: the preset equals the file.
printf 'name,model,seq,micro_batch,gpu_mem_gb\nx,tiny,512,2,80\n' >"$T/by-name.csv"
printf 'name,model,seq,micro_batch,gpu_mem_gb\nx,%s/tiny,512,2,80\n' "$T" >"$T/by-file.csv"
run eval --models "$T/mine.csv" "$T/by-name.csv" >"$T/a" 2>&1
run eval "$T/by-file.csv" >"$T/b" 2>&1
check "an imported preset gives the file's terms" cmp -s "$T/a" "$T/b"

# Relative paths are relative to the current directory.
case $MEMFIT in /*) M=$MEMFIT ;; *) M=$(pwd)/$MEMFIT ;; esac
printf 'name,model,seq,micro_batch,gpu_mem_gb\nx,./tiny,512,2,80\n' >"$T/relative.csv"
(cd "$T" && $VALGRIND "$M" eval relative.csv) >"$T/c" 2>&1
check "a relative path is read from the current directory" cmp -s "$T/b" "$T/c"

# A byte-order mark before the JSON (as some editors save UTF-8): read as the same file without
# it, by import-config and in the model column (it was "not valid JSON ... near '???'").
mkdir -p "$T/bom"
{ printf '\357\273\277'; cat "$T/tiny/config.json"; } >"$T/bom/config.json"
expect_status "import-config of a file with a byte-order mark" 0 import-config "$T/bom"
check "... the same table as without it" test "$(cat "$T/out")" = "$(sed 's|tiny|bom|g' "$T/mine.csv")"
printf 'name,model,seq,micro_batch,gpu_mem_gb\nx,%s/bom,512,2,80\n' "$T" >"$T/by-bom.csv"
run eval "$T/by-bom.csv" >"$T/d" 2>&1
check "... and the same row in the model column" cmp -s "$T/b" "$T/d"

# Bytes that are not printable ASCII are shown escaped in a message, never as '?'.
printf '{"model_type": "llama\316\273"}\n' >"$T/greek.json"
expect_status "a model_type in another script: exit 1" 1 import-config "$T/greek.json"
expect_err "... shown escaped" "model_type 'llama\\xce\\xbb' is not supported (did you mean 'llama'?)"
printf '{"model_type": \316\273}\n' >"$T/token.json"
expect_status "not JSON near such bytes: exit 1" 1 import-config "$T/token.json"
expect_err "... shown escaped" "not valid JSON: invalid token near '\\xce\\xbb'"
