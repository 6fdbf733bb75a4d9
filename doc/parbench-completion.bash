# bash completion for parbench: commands, benchmarks, variants, backends,
# options and their values. Nothing is listed here: each completion asks the
# program being completed (parbench --help, parbench list, parbench COMMAND
# --help), so it always matches that build.

# "OPTION ARG" per option of `$@ --help` (ARG empty for a flag): the lines
# "  -o, --out FILE   what it does" of every command's help.
_parbench_options()
{
    "$@" --help 2>/dev/null | awk '
        /^ +-/ {
            n = 0
            for (i = 1; i <= NF; i++) {
                t = $i
                sub(/,$/, "", t)
                if (t ~ /^-/) {
                    opt[++n] = t
                } else if (n && (t ~ /^[A-Z]/ || t ~ /\|/)) {
                    for (j = 1; j <= n; j++) print opt[j], t
                    n = 0
                } else {
                    break
                }
            }
            for (j = 1; j <= n; j++) print opt[j], ""
        }'
}

# Backends compiled in (parbench list, "Backends:").
_parbench_backends()
{
    "$1" list 2>/dev/null | awk '/^[^ ]/ { in_list = ($0 ~ /^Backends:/); next }
                                 in_list && /^  [^ ]/ { print $1 }'
}

# Variants of benchmark $2, as NAME and BACKEND/NAME (parbench list).
_parbench_variants()
{
    "$1" list 2>/dev/null | awk -v bench="$2" '
        /^[^ ]/ { in_list = ($0 ~ /^Benchmarks:/); next }
        in_list && /^  [^ ]/ { name = $1; sub(/:$/, "", name); next }
        in_list && name == bench && /^    [^ ]/ && $1 ~ /\// {
            v = $1; sub(/\*$/, "", v); print v; sub(/^[^\/]*\//, "", v); print v
        }' | sort -u
}

# COMPREPLY from the words $1 for the last item of a comma-separated list.
_parbench_list_reply()
{
    local cur=$2 head=""
    if [[ $cur == *,* ]]; then
        head=${cur%,*},
        cur=${cur##*,}
    fi
    local w
    COMPREPLY=()
    for w in $(compgen -W "$1" -- "$cur"); do
        COMPREPLY+=("$head$w")
    done
}

_parbench_files()
{
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -f -- "$1"))
}

_parbench()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local pb=${COMP_WORDS[0]/#\~/$HOME}
    local IFS=$' \t\n'
    COMPREPLY=()
    command -v "$pb" >/dev/null 2>&1 || pb=parbench

    if ((COMP_CWORD == 1)); then
        local commands
        commands=$("$pb" --help 2>/dev/null | awk '/^commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }')
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi

    local cmd=${COMP_WORDS[1]} bench="" help=("$pb" "${COMP_WORDS[1]}")
    case $cmd in
    run)
        if ((COMP_CWORD == 2)); then
            COMPREPLY=($(compgen -W "$("$pb" run --help 2>/dev/null |
                awk '/^benchmarks:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }')" -- "$cur"))
            return
        fi
        bench=${COMP_WORDS[2]}
        help=("$pb" run "$bench")
        ;;
    project)
        if ((COMP_CWORD == 2)); then
            COMPREPLY=($(compgen -W "spmv-dist" -- "$cur"))
            return
        fi
        ;;
    esac

    # The value of the option before the cursor, if it takes one.
    local options arg
    options=$(_parbench_options "${help[@]}")
    if [[ $prev == -* ]]; then
        arg=$(awk -v o="$prev" '$1 == o { print $2; exit }' <<<"$options")
        case $prev in
        --backend) _parbench_list_reply "$(_parbench_backends "$pb")" "$cur"; return ;;
        --variant) _parbench_list_reply "$(_parbench_variants "$pb" "$bench")" "$cur"; return ;;
        --precision) _parbench_list_reply "float double tf32 bf16 fp16" "$cur"; return ;;
        --border) _parbench_list_reply "zero clamp" "$cur"; return ;;
        --format) [[ $arg == *'|'* ]] || arg="table|csv|json" ;;
        esac
        case $arg in
        "") ;; # a flag: complete what follows it
        *'|'*) COMPREPLY=($(compgen -W "${arg//|/ }" -- "$cur")); return ;;
        FILE* | *FILE | RESULTS* | NAMES) _parbench_files "$cur"; return ;;
        *) return ;; # a number or a name to type
        esac
    fi

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(awk '{ print $1 }' <<<"$options")" -- "$cur"))
        return
    fi
    case $cmd in
    matinfo | report | plot | compare | scaling) _parbench_files "$cur" ;;
    esac
}

complete -F _parbench parbench
