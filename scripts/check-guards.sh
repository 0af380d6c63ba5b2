#!/usr/bin/env bash
# Keeps C++ out of PostgreSQL error regions (extension/pg/pg_error.hpp). A longjmp out of a
# guard skips every destructor between the elog and the guard, so a guard must hold nothing
# but PostgreSQL calls on plain data. Flags, in extension/**/*.{cpp,hpp} or the files named:
#   - pg::guarded(lambda) whose body is more than one statement (or has control flow), unless
#     the line or the one before says "guard: plain C";
#   - anything C++ in a guard's lambda or in pg::call's arguments: a lambda passed to pg::call,
#     std:: names, a namespace-qualified call (idem::, keys::, ... all but pg::), throw,
#     new, delete, try, catch, an idem Error, a helper of ours known to throw;
#   - the same C++ in the body of a plain-C helper named ..._unsafe (what pg::call runs), where
#     std::mem*/str* and std::size_t are allowed.
# It reads text, so it cannot see what a function called from a guard does unless that function
# is an ..._unsafe helper; the static_asserts of pg::call and pg::guarded cover the types.
# Exits 1 and prints file:line: reason for each finding; tests/scripts/check_guards_test.sh
# shows it failing on a bad fixture.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(find extension \( -name '*.cpp' -o -name '*.hpp' \) | sort)
fi

status=0
for f in "${files[@]}"; do
  awk -v file="$f" '
    { raw[NR] = $0 }
    function ident(c) { return c ~ /[A-Za-z0-9_]/ }
    # code: text with comments and the insides of string and char literals blanked, newlines
    # kept, so positions and line numbers stay those of the file.
    function strip(   k, i, n, c, d, line, out, state, all) {
      state = "code"; all = ""
      for (k = 1; k <= NR; k++) {
        line = raw[k]; n = length(line); out = ""
        if (state == "line") state = "code"
        for (i = 1; i <= n; i++) {
          c = substr(line, i, 1); d = substr(line, i + 1, 1)
          if (state == "code") {
            if (c == "/" && d == "/") { state = "line"; out = out "  "; i++; continue }
            if (c == "/" && d == "*") { state = "block"; out = out "  "; i++; continue }
            if (c == "\"") state = "string"
            else if (c == "\x27" && !ident(substr(line, i - 1, 1))) state = "char"
            out = out c
          } else if (state == "line") {
            out = out " "
          } else if (state == "block") {
            if (c == "*" && d == "/") { state = "code"; out = out "  "; i++; continue }
            out = out " "
          } else {
            if (c == "\\") { out = out (i < n ? "  " : " "); i++; continue }
            if ((state == "string" && c == "\"") || (state == "char" && c == "\x27")) { state = "code"; out = out c; continue }
            out = out " "
          }
        }
        all = all out "\n"
      }
      return all
    }
    function line_of(pos,   k) { k = 1; while (k < nlines && start[k + 1] <= pos) k++; return k }
    # The position of the bracket closing the one at pos (op and cl given), 0 if none.
    function closing(pos, op, cl,   depth, i, c) {
      depth = 0
      for (i = pos; i <= length(code); i++) {
        c = substr(code, i, 1)
        if (c == op) depth++
        else if (c == cl && --depth == 0) return i
      }
      return 0
    }
    function report(pos, why) { printf "%s:%d: %s\n", file, line_of(pos), why; found = 1 }
    # What no guard and no _unsafe helper may contain.
    function cxx(s, allow_std,   t) {
      if (match(s, /(^|[^A-Za-z0-9_])throw([^A-Za-z0-9_]|$)/)) return "throws"
      if (match(s, /(^|[^A-Za-z0-9_])(new|delete)([^A-Za-z0-9_]|$)/)) return "new/delete"
      if (match(s, /(^|[^A-Za-z0-9_])(try|catch)([^A-Za-z0-9_]|$)/)) return "try/catch"
      if (match(s, /(^|[^A-Za-z0-9_])(Error|StandardError)[ \t\n]*[({]/)) return "constructs an idem Error"
      t = s
      if (allow_std) gsub(/std::(memcpy|memset|memcmp|strcmp|strncmp|strlen|size_t)/, "", t)
      if (match(t, /std::/)) return "uses std::"
      if (match(s, /(^|[^A-Za-z0-9_])(text_datum|bytea_datum|interval_datum|text_array_datum|sha256|format_handle|handler_key|parse_handle|require_tenant|require_durable_store_now|append_audit|spi_connect|spi_finish|raise_internal|draw_secret|to_string|make_unique|make_shared)[ \t\n]*\(/)) return "calls a helper that throws"
      if (match(s, /\.(add|add_null|push_back|emplace_back|append|c_str)[ \t\n]*\(/)) return "builds a C++ object"
      return ""
    }
    function qualified(s,   t) {
      t = s
      gsub(/pg::/, "", t)
      return match(t, /[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_:]*[ \t\n]*\(/)
    }
    function is_lambda_at(s) { return match(s, /^[ \t\n]*\[[&=*A-Za-z0-9_, \t]*\][ \t\n]*(\([^)]*\))?[ \t\n]*(mutable)?[ \t\n]*(->[^{]*)?\{/) }
    END {
      code = strip()
      nlines = NR; pos = 1
      for (k = 1; k <= NR; k++) { start[k] = pos; pos += length(raw[k]) + 1 }
      n = length(code)
      for (i = 1; i <= n; i++) {
        g = substr(code, i, 8) == "guarded(" && !ident(substr(code, i - 1, 1))
        c = substr(code, i, 9) == "pg::call(" && !ident(substr(code, i - 1, 1))
        if (!g && !c) continue
        op = i + (g ? 7 : 8)
        if (g && substr(code, i - 5, 5) ~ /auto[ \t]/) continue  # the definition
        cl = closing(op, "(", ")")
        if (cl == 0) { report(i, "unbalanced guard"); continue }
        arg = substr(code, op + 1, cl - op - 1)
        if (c) {
          if (match(arg, /\[[&=*A-Za-z0-9_, \t]*\][ \t\n]*(\([^)]*\))?[ \t\n]*(mutable)?[ \t\n]*\{/)) report(i, "pg::call takes a function, not a lambda")
          else if ((why = cxx(arg, 0)) != "") report(i, "C++ in pg::call arguments (" why ")")
          continue
        }
        if (!is_lambda_at(arg)) { report(i, "pg::guarded takes a lambda (a function goes to pg::call)"); continue }
        b = index(arg, "{")
        e = op + b
        bend = closing(e, "{", "}")
        body = substr(code, e + 1, bend - e - 1)
        if ((why = cxx(arg, 0)) != "") { report(i, "C++ in a guard (" why ")"); continue }
        if (qualified(body)) { report(i, "C++ in a guard (a call of ours: use pg::call(f, args...))"); continue }
        l = line_of(i)
        annotated = raw[l] ~ /guard: plain C/ || (l > 1 && raw[l - 1] ~ /guard: plain C/)
        if (annotated) continue
        semis = 0; depth = 0
        for (j = 1; j <= length(body); j++) {
          ch = substr(body, j, 1)
          if (ch == "(" || ch == "{") depth++
          else if (ch == ")" || ch == "}") depth--
          else if (ch == ";" && depth == 0) semis++
        }
        if (semis > 1 || match(body, /\{/)) report(i, "a guard of more than one statement (one PostgreSQL call a guard; plain-C sequences go in an ..._unsafe helper)")
        else if (match(body, /(^|[^A-Za-z0-9_])(if|for|while|switch|do|goto)([^A-Za-z0-9_]|$)/)) report(i, "control flow in a guard (one PostgreSQL call a guard)")
      }
      # The bodies of ..._unsafe definitions: a name ending in _unsafe, its parameter list, then {.
      rest = code; off = 0
      while (match(rest, /[A-Za-z0-9_]+_unsafe[ \t\n]*\(/)) {
        at = off + RSTART; p = off + RSTART + RLENGTH - 1
        off += RSTART + RLENGTH - 1; rest = substr(code, off + 1)
        q = closing(p, "(", ")")
        if (q == 0) continue
        after = substr(code, q + 1, 40)
        if (!match(after, /^[ \t\n]*(const[ \t\n]*)?(noexcept[ \t\n]*)?\{/)) continue  # a call or a declaration
        if (ident(substr(code, at - 1, 1))) continue
        ob = q + index(after, "{")
        cb = closing(ob, "{", "}")
        ubody = substr(code, ob + 1, cb - ob - 1)
        if ((why = cxx(ubody, 1)) != "") report(at, "C++ in a plain-C helper (" why ")")
      }
      exit found
    }
  ' "$f" || status=1
done
[ "$status" = 0 ] && echo "check-guards: ${#files[@]} files, every guard holds one PostgreSQL call and no C++"
exit "$status"
