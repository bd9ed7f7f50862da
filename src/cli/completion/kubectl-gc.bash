# bash completion for kubectl-gc run on its own: source <(kubectl-gc completion bash)
# Every candidate comes from `kubectl-gc __complete WORDS…` (cobra's protocol: `value<TAB>help`
# lines, then `:<directive>`), the same answers `kubectl gc <TAB>` gets through
# kubectl_complete-gc: flags, TYPE and NAME from discovery or the --snapshot given.
_kubectl_gc() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    # bash splits `--output=d` and `system:x` at = and : (COMP_WORDBREAKS); the words are glued
    # back before they are asked about, and the answers cut back to bash's last piece
    local -a words=()
    local i w n prev=
    for ((i = 1; i <= COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        n=${#words[@]}
        if ((n > 0)) && [[ $w == [=:] || $prev == [=:] ]]; then
            words[n-1]+=$w
        else
            words+=("$w")
        fi
        prev=$w
    done
    local last=${words[${#words[@]}-1]}
    # what bash replaces is the piece after the last = or : (empty right after one)
    local cut=${last%"$cur"}
    [[ $cur == [=:] ]] && cut=$last
    local out
    out=$("${COMP_WORDS[0]}" __complete "${words[@]}" 2>/dev/null) || return
    local directive=${out##*:}
    COMPREPLY=()
    local line
    while IFS= read -r line; do
        [[ $line == :* || -z $line ]] && continue
        line=${line%%$'\t'*}
        COMPREPLY+=("${line#"$cut"}")
    done <<<"$out"
    if ((${#COMPREPLY[@]} == 0)) && [[ $directive == 0 ]]; then
        # a file flag (--snapshot, --kubeconfig, --file): the shell's file names
        compopt -o filenames 2>/dev/null
        local IFS=$'\n'
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -o nosort -F _kubectl_gc kubectl-gc 2>/dev/null || complete -F _kubectl_gc kubectl-gc
