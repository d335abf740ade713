# bash completion for memfit(1): commands, each command's options, the values of the options
# that take one of a few words, and file names (scenario CSV files, templates, folders).
# Installed by `make install` as $(PREFIX)/share/bash-completion/completions/memfit.
# tests/cli/completion.sh checks it against `memfit help COMMAND`: a command or an option added
# to src/cli/help.c (the tables of commands and options) must be added here too.

_memfit_commands="eval report figures search import-config help"

# The options of each command (those of `memfit help COMMAND`).
_memfit_options() {
    local common="-q --quiet -h --help"
    local presets="--units --peak --impl --reserve --models --gpus --progress"
    case $1 in
    eval) echo "-o --out --format --wide --threads $presets $common" ;;
    report) echo "-o --out --split --template --paper $presets $common" ;;
    figures) echo "-o --out $common" ;;
    search) echo "-o --out --format --wide --top --gpus-range --tokens --days --price --report $presets $common" ;;
    import-config | help) echo "$common" ;;
    *) echo "$common --version" ;;
    esac
}

# The options whose value is the next word.
_memfit_takes_value() {
    case $1 in
    -o | --out | --format | --template | --paper | --units | --peak | --impl | --reserve | --models | \
        --gpus | --progress | --top | --gpus-range | --tokens | --days | --price | --report) return 0 ;;
    esac
    return 1
}

# COMPREPLY for the value of option $1 of command $2, the word typed so far being $3.
_memfit_value() {
    local opt=$1 cmd=$2 cur=$3
    case $opt in
    --format) mapfile -t COMPREPLY < <(compgen -W "csv json table" -- "$cur") ;;
    --units) mapfile -t COMPREPLY < <(compgen -W "GB GiB" -- "$cur") ;;
    --peak) mapfile -t COMPREPLY < <(compgen -W "lesson step" -- "$cur") ;;
    --impl) mapfile -t COMPREPLY < <(compgen -W "memfit megatron hf hf-peft" -- "$cur") ;;
    --paper) mapfile -t COMPREPLY < <(compgen -W "a4 letter" -- "$cur") ;;
    --progress) mapfile -t COMPREPLY < <(compgen -W "auto always never" -- "$cur") ;;
    --reserve) mapfile -t COMPREPLY < <(compgen -W "0.1 0.15 0.2" -- "$cur") ;;
    --top) mapfile -t COMPREPLY < <(compgen -W "1 3 10" -- "$cur") ;;
    --gpus-range) mapfile -t COMPREPLY < <(compgen -W "8:1024 8:16384" -- "$cur") ;;
    --tokens) mapfile -t COMPREPLY < <(compgen -W "1T 15T" -- "$cur") ;;
    --days) mapfile -t COMPREPLY < <(compgen -W "30 90" -- "$cur") ;;
    --template) _memfit_files "$cur" '*.tmpl' ;;
    --report) _memfit_files "$cur" '*.pdf' ;;
    --models | --gpus) _memfit_files "$cur" '*.csv' ;;
    -o | --out)
        case $cmd in
        eval | search) _memfit_files "$cur" '*' ;;
        report) _memfit_files "$cur" '*.pdf' ;;
        *) _memfit_files "$cur" '' ;;
        esac
        ;;
    esac
}

# COMPREPLY: the folders starting with $1, and the files among them that match the glob $2
# (none when it is empty).
_memfit_files() {
    local cur=$1 glob=$2 f
    COMPREPLY=()
    while IFS= read -r f; do
        COMPREPLY+=("$f")
    done < <(compgen -d -- "$cur")
    if [ -n "$glob" ]; then
        while IFS= read -r f; do
            [ -d "$f" ] && continue
            # shellcheck disable=SC2053 # a glob on purpose
            [[ ${f##*/} == $glob ]] && COMPREPLY+=("$f")
        done < <(compgen -f -- "$cur")
    fi
    compopt -o filenames 2>/dev/null
    return 0
}

_memfit() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev="" cmd="" i w
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    # --opt=value: bash splits at '=' (COMP_WORDBREAKS), so the option is two words back.
    if [ "$cur" = "=" ]; then
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        cur=""
    elif [ "$prev" = "=" ] && ((COMP_CWORD > 1)); then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    elif [ "$prev" = "=" ]; then
        prev=""
    fi
    # The command: the first word that is neither an option nor an option's value.
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if [ "$w" = "=" ]; then
            ((i++))
            continue
        fi
        case $w in
        --) ;;
        -*) if _memfit_takes_value "$w" && [ "${COMP_WORDS[i + 1]}" != "=" ]; then ((i++)); fi ;;
        *)
            cmd=$w
            break
            ;;
        esac
    done
    if _memfit_takes_value "$prev"; then
        _memfit_value "$prev" "$cmd" "$cur"
        return 0
    fi
    case $cur in
    -*)
        mapfile -t COMPREPLY < <(compgen -W "$(_memfit_options "$cmd")" -- "$cur")
        return 0
        ;;
    esac
    case $cmd in
    "") mapfile -t COMPREPLY < <(compgen -W "$_memfit_commands" -- "$cur") ;;
    help) mapfile -t COMPREPLY < <(compgen -W "$_memfit_commands" -- "$cur") ;;
    eval | report | search) _memfit_files "$cur" '*.csv' ;;
    import-config) _memfit_files "$cur" '*.json' ;;
    *) COMPREPLY=() ;;
    esac
    return 0
}

complete -F _memfit memfit
