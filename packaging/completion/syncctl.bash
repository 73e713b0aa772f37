# bash completion for syncctl(1)                              -*- shell-script -*-

# Source names from 'syncctl status --json' (simple shell tools, no jq needed).
_syncctl_sources()
{
    local socket_args=()
    local i
    for ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do
        case ${COMP_WORDS[i]} in
            --socket) socket_args+=(--socket "${COMP_WORDS[i+1]}") ;;
            --socket=*) socket_args+=("${COMP_WORDS[i]}") ;;
            --user) socket_args+=(--user) ;;
        esac
    done
    syncctl "${socket_args[@]}" status --json=short 2>/dev/null \
        | grep -o '"name":"[A-Za-z0-9_.-]*"' | sed 's/^"name":"//; s/"$//'
}

_syncctl()
{
    local cur prev words cword
    _init_completion -n = || return

    local commands="status refresh list get changes put delete outbox conflicts resolve watch logout reload help"
    local globals="--socket --user --json --json=short --json=pretty --json=off --json=help --timeout= --no-legend --no-pager --help --version"

    case $prev in
        --socket) _filedir; return ;;
        --keep) COMPREPLY=($(compgen -W "local remote" -- "$cur")); return ;;
        --retry|--drop|--restore|--timeout|--since|--limit) return ;;
    esac

    local command="" i positional=0
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --socket|--timeout) ((i++)) ;;
            -*) ;;
            *)
                if [[ -z $command ]]; then command=${words[i]}; else ((positional++)); fi
                ;;
        esac
    done

    if [[ -z $command ]]; then
        COMPREPLY=($(compgen -W "$commands $globals" -- "$cur"))
        return
    fi

    local options=""
    case $command in
        refresh) options="--wait" ;;
        changes) options="--since --limit" ;;
        outbox) options="--retry --drop --discarded --restore" ;;
        resolve) options="--keep" ;;
        logout) options="--discard-pending" ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options $globals" -- "$cur"))
        return
    fi

    case $command in
        help)
            ((positional == 0)) && COMPREPLY=($(compgen -W "$commands" -- "$cur"))
            ;;
        status)
            COMPREPLY=($(compgen -W "$(_syncctl_sources)" -- "$cur"))
            ;;
        refresh|list|get|changes|delete|outbox|resolve)
            ((positional == 0)) && COMPREPLY=($(compgen -W "$(_syncctl_sources)" -- "$cur"))
            ;;
        put)
            if ((positional == 0)); then
                COMPREPLY=($(compgen -W "$(_syncctl_sources)" -- "$cur"))
            else
                _filedir json
            fi
            ;;
    esac
} && complete -F _syncctl syncctl

# ex: filetype=sh
