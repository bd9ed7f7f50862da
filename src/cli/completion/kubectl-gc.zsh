#compdef kubectl-gc
# zsh completion for kubectl-gc run on its own: source <(kubectl-gc completion zsh), or save it
# as _kubectl-gc in a directory of $fpath. Every candidate comes from `kubectl-gc __complete
# WORDS…` (cobra's protocol), as `kubectl gc <TAB>` gets them through kubectl_complete-gc.
_kubectl-gc() {
    local out directive line
    local -a lines candidates
    out=$("${words[1]}" __complete "${(@)words[2,CURRENT]}" 2>/dev/null) || return 1
    lines=("${(@f)out}")
    directive=${lines[-1]#:}
    for line in "${(@)lines[1,-2]}"; do
        [[ -z $line ]] && continue
        if [[ $line == *$'\t'* ]]; then
            candidates+=("${${line%%$'\t'*}//:/\\:}:${line#*$'\t'}")
        else
            candidates+=("${line//:/\\:}")
        fi
    done
    if (( ${#candidates} )); then
        _describe -V kubectl-gc candidates
    elif [[ $directive == 0 ]]; then
        _files
    fi
}
if [[ $funcstack[1] == _kubectl-gc ]]; then
    _kubectl-gc "$@"
else
    compdef _kubectl-gc kubectl-gc
fi
