#include "agent/shim/leftovers.h"

#include <dirent.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "agent/shim/shim_files.h"

namespace longhaul::shim {
namespace {

// Parses "PID (COMM) STATE PPID PGRP SESSION ..."; COMM may hold spaces and parentheses, so
// the fields start after the last ')'.
bool ParseStatLine(const std::string& text, ProcEntry* e) {
  size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return false;
  e->pid = static_cast<pid_t>(std::strtol(text.c_str(), nullptr, 10));
  int ppid = 0, pgid = 0, sid = 0;
  char state = '?';
  if (std::sscanf(text.c_str() + close + 2, "%c %d %d %d", &state, &ppid, &pgid, &sid) != 4) {
    return false;
  }
  e->state = state;
  e->ppid = ppid;
  e->pgid = pgid;
  e->sid = sid;
  return e->pid > 0;
}

}  // namespace

std::vector<ProcEntry> ListProcesses() {
  std::vector<ProcEntry> out;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* ent = ::readdir(d)) {
    if (ent->d_name[0] < '1' || ent->d_name[0] > '9') continue;
    std::string text;
    if (!ReadSmallFile(std::string("/proc/") + ent->d_name + "/stat", &text)) continue;
    ProcEntry e;
    if (ParseStatLine(text, &e)) out.push_back(e);
  }
  ::closedir(d);
  return out;
}

std::vector<pid_t> AttemptProcesses(const std::vector<ProcEntry>& all, pid_t shim, pid_t stage_pgid,
                                    pid_t session) {
  std::multimap<pid_t, const ProcEntry*> children;
  for (const ProcEntry& e : all) children.emplace(e.ppid, &e);
  std::set<pid_t> in;
  std::vector<const ProcEntry*> todo;
  for (const ProcEntry& e : all) {
    if (e.pid == shim) continue;
    if (e.ppid == shim || (stage_pgid > 0 && e.pgid == stage_pgid) ||
        (session > 0 && e.sid == session)) {
      if (in.insert(e.pid).second) todo.push_back(&e);
    }
  }
  while (!todo.empty()) {  // and their descendants, whatever group or session they made
    const ProcEntry* p = todo.back();
    todo.pop_back();
    auto [lo, hi] = children.equal_range(p->pid);
    for (auto it = lo; it != hi; ++it) {
      if (it->second->pid != shim && in.insert(it->second->pid).second) todo.push_back(it->second);
    }
  }
  std::vector<pid_t> out;
  for (const ProcEntry& e : all) {
    if (in.count(e.pid) && e.state != 'Z') out.push_back(e.pid);
  }
  return out;
}

int KillAttemptProcesses(pid_t shim, pid_t stage_pgid, pid_t session, int64_t wait_ms,
                         const std::function<void()>& reap, const std::function<void()>& pause) {
  std::set<pid_t> killed;
  int64_t deadline = WallMs() + wait_ms;
  for (;;) {
    reap();
    std::vector<pid_t> alive = AttemptProcesses(ListProcesses(), shim, stage_pgid, session);
    if (alive.empty() || WallMs() >= deadline) break;
    for (pid_t p : alive) {
      if (::kill(p, SIGKILL) == 0) killed.insert(p);
    }
    pause();
  }
  reap();
  return static_cast<int>(killed.size());
}

std::string LeftoversNote(int killed) {
  if (killed <= 0) return "";
  return killed == 1 ? "1 process outlived the stage and was killed"
                     : std::to_string(killed) + " processes outlived the stage and were killed";
}

}  // namespace longhaul::shim
