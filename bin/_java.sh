# Sourced by every entry point (bin/*, bench/*.sh, ./mvnw): picks a Java 21+ runtime, or says in one line what to install.
# Order: $JAVA_HOME, java on PATH, then any JDK under /usr/lib/jvm.
mooncake_java_version() {
  "$1" -XX:-UsePerfData -version 2>&1 | awk -F'"' '/version/ {split($2, v, "."); print (v[1] == "1" ? v[2] : v[1]); exit}'
}
mooncake_find_java() {
  local candidates=()
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME/bin/java")
  command -v java >/dev/null 2>&1 && candidates+=("$(command -v java)")
  for j in /usr/lib/jvm/*/bin/java; do [ -x "$j" ] && candidates+=("$j"); done
  for j in "${candidates[@]}"; do
    local v
    v=$(mooncake_java_version "$j" 2>/dev/null || true)
    if [ -n "$v" ] && [ "$v" -ge 21 ] 2>/dev/null; then echo "$j"; return 0; fi
  done
  return 1
}
JAVA=$(mooncake_find_java) || { echo "$(basename "$0"): needs Java 21 or newer and found none (JAVA_HOME, PATH, /usr/lib/jvm); install a JDK 21+ (Debian/Ubuntu: apt-get install openjdk-21-jdk-headless) or set JAVA_HOME to one" >&2; exit 1; }
