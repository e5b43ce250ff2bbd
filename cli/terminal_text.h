// Text from stages, params and metadata made safe to print on a terminal. A value a stage
// wrote (an output, a param, a reason, a log line) may hold escape sequences that set the
// window title, recolour or clear the screen, or a newline that fakes table lines; printed as
// is, the terminal would obey them. Here every control character and every byte that is not
// valid UTF-8 is shown as visible text instead (docs/cli.md, "Control characters"):
//
//   ESC -> \e    BEL -> \a   BS -> \b   TAB -> \t   LF -> \n   VT -> \v   FF -> \f   CR -> \r
//   other C0 controls and DEL -> \xNN          C1 controls (U+0080..U+009F) -> \u0080..\u009f
//   a byte that is not valid UTF-8 -> \xNN     bidi overrides and isolates -> \u202e, ...
//
// Everything else, backslashes and printable non-ASCII text included, is kept as it is.
#pragma once

#include <string>
#include <string_view>

namespace longhaul::cli {

// `s` with every control character and invalid byte escaped as above.
std::string TerminalSafe(std::string_view s);

// The same for a log written to a terminal: newlines and tabs are kept, so its lines stay
// lines. Text arrives in chunks that may cut a UTF-8 sequence: Feed returns what is safe so
// far and keeps an incomplete sequence at the end for the next chunk; Finish returns the rest
// (an incomplete sequence at the very end is invalid and escaped).
class TerminalSafeLog {
 public:
  std::string Feed(std::string_view chunk);
  std::string Finish();

 private:
  std::string pending_;
};

}  // namespace longhaul::cli
