// The bash and zsh completion scripts (completion.h): each is the command table (command_specs.h)
// written as a `case` over the command's words, plus a fixed function that walks the words typed so
// far.
#include <fmt/format.h>

#include <string_view>

#include "cli/command_specs.h"
#include "cli/completion.h"

namespace cudojo::cli {

namespace {

// The words the scripts share for one command: its subcommands (`help` too at the top: command_line.h
// makes `cudojo help COMMAND` mean `cudojo COMMAND --help`), its options, and OPTION=KIND for each
// option that takes a value.
struct ScriptWords {
  std::vector<std::string> subcommands, options, values;
};

ScriptWords script_words(const CommandSpec& spec) {
  ScriptWords words;
  for (const auto& [name, summary] : spec.subcommands) words.subcommands.push_back(name);
  if (spec.path.empty()) words.subcommands.push_back("help");
  for (const auto& option : spec.options) {
    for (const auto& name : option.names) {
      words.options.push_back(name);
      if (!option.kind.empty()) words.values.push_back(name + "=" + option.kind);
    }
  }
  return words;
}

constexpr std::string_view kBashScript =
    R"bash(# bash completion for cudojo, written by `cudojo completion bash` from cudojo's own command definitions.
# Put this in ~/.bashrc:   source <(cudojo completion bash)

# _cudojo_spec COMMAND: sets the caller's subs, opts, values (OPTION=KIND) and args (the positionals'
# kinds) for COMMAND, the command's words after `cudojo`.
_cudojo_spec() {
  case $1 in
@SPECS@  esac
}

# _cudojo_kind_of OPTION: true, with kind set, when OPTION takes a value.
_cudojo_kind_of() {
  local entry
  for entry in $values; do
    if [[ ${entry%%=*} == "$1" ]]; then
      kind=${entry#*=}
      return 0
    fi
  done
  return 1
}

# _cudojo_argument_kind N: sets kind to the kind of the command's Nth positional (from 0).
_cudojo_argument_kind() {
  local -a list=($args)
  if (($1 < ${#list[@]})); then
    kind=${list[$1]}
  elif ((${#list[@]})) && [[ ${list[-1]} == *... ]]; then
    kind=${list[-1]}
  else
    kind=none
  fi
  kind=${kind%...}
}

# _cudojo_reply KIND WORD: COMPREPLY for WORD, a value of that kind.
_cudojo_reply() {
  local list=
  case $1 in
    stage) list=$("$self" "${course[@]}" __complete stages 2>/dev/null) ;;
    lang) list='@LANGUAGES@' ;;
    words:*)
      list=${1#words:}
      list=${list//,/ } ;;
    file | dir)
      compopt -o filenames 2>/dev/null
      if [[ $1 == dir ]]; then mapfile -t COMPREPLY < <(compgen -d -- "$2"); else mapfile -t COMPREPLY < <(compgen -f -- "$2"); fi
      return ;;
    *) COMPREPLY=(); return ;;
  esac
  mapfile -t COMPREPLY < <(compgen -W "$list" -- "$2")
}

_cudojo() {
  local cur=${COMP_WORDS[COMP_CWORD]} self=${COMP_WORDS[0]} command= word= pending= kind= i
  local subs= opts= values= args=
  local -i given=0
  local -a course=()
  [[ $self == '~/'* ]] && self=$HOME/${self#'~/'}
  _cudojo_spec ''
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    if [[ -n $pending && $word == = ]]; then
      continue  # --lang=python, split by bash at the =
    elif [[ -n $pending ]]; then
      [[ $pending == --course ]] && course=(--course "$word")
      pending=
    elif [[ $word == -* ]]; then
      _cudojo_kind_of "$word" && pending=$word
    elif [[ -z $command && $word == help ]]; then
      :  # `cudojo help COMMAND` is `cudojo COMMAND --help`
    elif [[ " $subs " == *" $word "* ]]; then
      command=${command:+$command }$word
      given=0
      _cudojo_spec "$command"
    else
      ((++given))
    fi
  done
  [[ -n $pending && $cur == = ]] && cur=
  if [[ -n $pending ]]; then
    _cudojo_kind_of "$pending"
    _cudojo_reply "$kind" "$cur"
  elif [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
  elif [[ -n $subs ]] && ((given == 0)); then
    mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
  else
    _cudojo_argument_kind $given
    _cudojo_reply "$kind" "$cur"
  fi
}

complete -F _cudojo cudojo
)bash";

constexpr std::string_view kZshScript = R"zsh(#compdef cudojo
# zsh completion for cudojo, written by `cudojo completion zsh` from cudojo's own command definitions.
# Put this in ~/.zshrc (it runs compinit when that has not run yet):   source <(cudojo completion zsh)

# _cudojo_spec COMMAND: sets the caller's subs, subdescs, opts, optdescs, values (OPTION=KIND) and args
# (the positionals' kinds) for COMMAND, the command's words after `cudojo`.
_cudojo_spec() {
  case $1 in
@SPECS@  esac
}

# _cudojo_kind_of OPTION: true, with kind set, when OPTION takes a value.
_cudojo_kind_of() {
  local entry
  for entry in $values; do
    if [[ ${entry%%=*} == $1 ]]; then
      kind=${entry#*=}
      return 0
    fi
  done
  return 1
}

# _cudojo_argument_kind N: sets kind to the kind of the command's Nth positional (from 0).
_cudojo_argument_kind() {
  if (( $1 < $#args )); then
    kind=${args[$1 + 1]}
  elif (( $#args )) && [[ ${args[-1]} == *... ]]; then
    kind=${args[-1]}
  else
    kind=none
  fi
  kind=${kind%...}
}

# _cudojo_reply KIND: offers values of that kind for the word under the cursor.
_cudojo_reply() {
  local -a list
  case $1 in
    stage)
      list=(${(f)"$($self $course __complete stages 2>/dev/null)"})
      compadd -a list ;;
    lang) compadd -- @LANGUAGES@ ;;
    words:*) compadd -- ${(s:,:)${1#words:}} ;;
    file) _files ;;
    dir) _files -/ ;;
    *) return 1 ;;
  esac
}

_cudojo() {
  local self=${words[1]} cmd= word= pending= kind= i
  local -a subs subdescs opts optdescs values args course
  local -i given=0
  [[ $self == '~/'* ]] && self=$HOME/${self#'~/'}
  _cudojo_spec ''
  for ((i = 2; i < CURRENT; i++)); do
    word=${words[i]}
    if [[ -n $pending ]]; then
      [[ $pending == --course ]] && course=(--course $word)
      pending=
    elif [[ $word == -* ]]; then
      [[ $word != *=* ]] && _cudojo_kind_of $word && pending=$word
    elif [[ -z $cmd && $word == help ]]; then
      :  # `cudojo help COMMAND` is `cudojo COMMAND --help`
    elif (( ${subs[(Ie)$word]} )); then
      cmd=${cmd:+$cmd }$word
      given=0
      _cudojo_spec $cmd
    else
      (( ++given ))
    fi
  done
  local cur=${words[CURRENT]}
  if [[ -n $pending ]]; then
    _cudojo_kind_of $pending
    _cudojo_reply $kind
  elif [[ $cur == --*=* ]]; then
    _cudojo_kind_of ${cur%%=*} && compset -P '*=' && _cudojo_reply $kind
  elif [[ $cur == -* ]]; then
    _describe -t options 'option' optdescs
  elif (( $#subs && given == 0 )); then
    _describe -t commands 'cudojo command' subdescs
  else
    _cudojo_argument_kind $given
    _cudojo_reply $kind
  fi
}

if (( ! $+functions[compdef] )); then
  autoload -Uz compinit && compinit
fi
compdef _cudojo cudojo
)zsh";

std::string filled(std::string_view script, const std::string& specs) {
  std::string text(script);
  text.replace(text.find("@SPECS@"), 7, specs);
  text.replace(text.find("@LANGUAGES@"), 11, language_words());
  return text;
}

// A described word for zsh's _describe: "name:summary", a colon in the name escaped.
std::string described(const std::string& name, const std::string& summary) {
  std::string escaped;
  for (const char c : name) escaped += c == ':' ? std::string("\\:") : std::string(1, c);
  return shell_quoted(summary.empty() ? escaped : escaped + ":" + summary);
}

}  // namespace

std::string bash_completion_script(const CLI::App& app) {
  std::string specs;
  for (const CommandSpec& spec : command_specs(app)) {
    const ScriptWords words = script_words(spec);
    specs += fmt::format("    {})\n      subs={}\n      opts={}\n      values={}\n      args={}\n      ;;\n",
                         shell_quoted(spec.path), shell_quoted(join(words.subcommands)),
                         shell_quoted(join(words.options)), shell_quoted(join(words.values)),
                         shell_quoted(join(spec.arguments)));
  }
  return filled(kBashScript, specs);
}

std::string zsh_completion_script(const CLI::App& app) {
  std::string specs;
  for (const CommandSpec& spec : command_specs(app)) {
    const ScriptWords words = script_words(spec);
    std::vector<std::string> subcommand_descriptions, option_descriptions;
    for (const auto& [name, summary] : spec.subcommands)
      subcommand_descriptions.push_back(described(name, summary));
    if (spec.path.empty()) subcommand_descriptions.push_back(described("help", "Show a command's help"));
    for (const auto& option : spec.options)
      for (const auto& name : option.names) option_descriptions.push_back(described(name, option.summary));
    specs += fmt::format(
        "    {})\n      subs=({})\n      subdescs=({})\n      opts=({})\n      optdescs=({})\n"
        "      values=({})\n      args=({})\n      ;;\n",
        shell_quoted(spec.path), join(shell_quoted_each(words.subcommands)), join(subcommand_descriptions),
        join(shell_quoted_each(words.options)), join(option_descriptions),
        join(shell_quoted_each(words.values)), join(shell_quoted_each(spec.arguments)));
  }
  return filled(kZshScript, specs);
}
}  // namespace cudojo::cli
