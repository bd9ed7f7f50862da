# fish completion for kubectl-gc run on its own: kubectl-gc completion fish | source, or save it
# as ~/.config/fish/completions/kubectl-gc.fish. Every candidate comes from `kubectl-gc
# __complete WORDS…` (cobra's protocol, whose `value<TAB>help` lines fish reads as they are).
function __kubectl_gc_complete
    set -l words (commandline -opc)
    set -l cmd $words[1]
    set -e words[1]
    set -l cur (commandline -ct)
    set -l out (command $cmd __complete $words "$cur" 2>/dev/null)
    or return
    set -l directive (string replace -r '^:' '' -- $out[-1])
    set -e out[-1]
    if test (count $out) -eq 0; and test "$directive" = 0
        __fish_complete_path "$cur"
        return
    end
    printf '%s\n' $out
end
complete -c kubectl-gc -f -a '(__kubectl_gc_complete)'
