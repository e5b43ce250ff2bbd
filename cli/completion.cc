#include "cli/completion.h"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace longhaul::cli {
namespace {

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

std::vector<std::string> Flags(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_positional()) continue;
    for (const auto& n : o->get_lnames()) out.push_back("--" + n);
    for (const auto& n : o->get_snames()) out.push_back("-" + n);
  }
  return out;
}

std::vector<const CLI::App*> Subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

// One `case` arm per command path ("" for the top, "logs", "token new"): the words to offer
// after it, flags when the word being completed starts with '-'.
void WriteCases(const CLI::App& app, const std::string& path, std::ostream& out) {
  std::vector<std::string> subs;
  for (const CLI::App* s : Subcommands(app)) subs.push_back(s->get_name());
  out << "    \"" << path << "\") subs=\"" << Join(subs) << "\"; flags=\"" << Join(Flags(app))
      << "\" ;;\n";
  for (const CLI::App* s : Subcommands(app)) {
    WriteCases(*s, path.empty() ? s->get_name() : path + " " + s->get_name(), out);
  }
}

}  // namespace

bool WriteCompletion(const CLI::App& app, const std::string& shell, std::ostream& out) {
  if (shell != "bash" && shell != "zsh") return false;
  if (shell == "zsh") {
    out << "# longhaul completion for zsh: eval \"$(longhaul completion zsh)\" in ~/.zshrc\n"
           "autoload -U +X bashcompinit && bashcompinit\n";
  } else {
    out << "# longhaul completion for bash: eval \"$(longhaul completion bash)\" in ~/.bashrc\n";
  }
  // The command path is the words that name subcommands, in order; a flag's value and the
  // positional arguments are skipped because they name none.
  out << "_longhaul() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} path=\"\" subs flags i w\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    w=${COMP_WORDS[i]}\n"
         "    [[ $w == -* ]] && continue\n"
         "    _longhaul_words \"$path\"\n"
         "    if [[ \" $subs \" == *\" $w \"* ]]; then path=${path:+$path }$w; fi\n"
         "  done\n"
         "  _longhaul_words \"$path\"\n"
         "  if [[ $cur == -* ]]; then\n"
         "    COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n"
         "  elif [[ -n $subs ]]; then\n"
         "    COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n"
         "  else\n"
         "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
         "  fi\n"
         "}\n"
         "_longhaul_words() {\n"
         "  subs=\"\"; flags=\"\"\n"
         "  case \"$1\" in\n";
  WriteCases(app, "", out);
  out << "  esac\n"
         "}\n"
         "complete -o default -F _longhaul longhaul\n";
  return true;
}

}  // namespace longhaul::cli
