# shellcheck shell=bash
# pg.sh: start a private, throwaway PostgreSQL cluster. Sourced by scripts/dev and
# scripts/test; not run on its own.
#
#   pg_start DIR   initialise (if needed) and start a cluster whose data and unix
#                  socket live under DIR; sets PG_SOCKET_DIR and PG_BASE_URL.
#   pg_stop        stop it (registered as an EXIT trap by the callers).
#
# The cluster listens only on a unix socket in a 0700 directory, so no TCP port
# can clash and no other local user can connect. As root, PostgreSQL refuses to
# run, so the cluster belongs to the `postgres` system user.

pg_find_bin() {
	local d
	for d in "$(pg_config --bindir 2>/dev/null)" /usr/lib/postgresql/*/bin /usr/local/bin /usr/bin; do
		if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
			PG_BIN=$d
			return 0
		fi
	done
	return 1
}

pg_install() {
	pg_find_bin && return 0
	echo "pg: initdb not found; installing PostgreSQL from Debian packages" >&2
	local sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
	pg_find_bin || { echo "pg: PostgreSQL installed but initdb still not found" >&2; return 1; }
}

# pg_as runs a command as the cluster's owner.
pg_as() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

pg_start() {
	local dir=$1
	pg_install
	if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
		useradd --system --home-dir /var/lib/postgresql --shell /bin/sh postgres
	fi
	mkdir -p "$dir"
	chmod 0700 "$dir"
	[ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
	PG_DATA_DIR=$dir/data
	PG_SOCKET_DIR=$dir
	if [ ! -f "$PG_DATA_DIR/PG_VERSION" ]; then
		pg_as "$PG_BIN/initdb" -D "$PG_DATA_DIR" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
			|| { cat "$dir/initdb.log" >&2; return 1; }
	fi
	PG_BASE_URL="postgres://postgres@/postgres?host=$PG_SOCKET_DIR&sslmode=disable"
	# A cluster that an earlier run left running on this very data directory
	# (the run was killed with SIGKILL) is reused, and stopped at exit.
	local pid
	pid=$(head -n 1 "$PG_DATA_DIR/postmaster.pid" 2>/dev/null) || true
	if [ -n "$pid" ] && [ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" = "$(cd "$PG_DATA_DIR" && pwd -P)" ]; then
		echo "pg: reusing the PostgreSQL an earlier run left running on $PG_DATA_DIR (pid $pid)" >&2
		PG_STARTED=$dir
		return 0
	fi
	# Only this run's part of the log is shown when the start fails.
	local from=1
	[ -f "$dir/postgres.log" ] && from=$(($(wc -c <"$dir/postgres.log") + 1))
	pg_as "$PG_BIN/pg_ctl" -D "$PG_DATA_DIR" -l "$dir/postgres.log" -w -t 60 \
		-o "-c listen_addresses='' -c unix_socket_directories='$PG_SOCKET_DIR' -c max_connections=300 -c fsync=off ${PG_EXTRA_OPTS:-}" \
		start >/dev/null || { tail -c +"$from" "$dir/postgres.log" >&2; return 1; }
	PG_STARTED=$dir
}

pg_stop() {
	if [ -n "${PG_STARTED:-}" ]; then
		pg_as "$PG_BIN/pg_ctl" -D "$PG_STARTED/data" -m fast -w stop >/dev/null 2>&1 || true
		PG_STARTED=""
	fi
}

# pg_createdb NAME prints the URL of a new database NAME in the running cluster.
pg_createdb() {
	pg_as "$PG_BIN/createdb" -h "$PG_SOCKET_DIR" -U postgres "$1"
	printf 'postgres://postgres@/%s?host=%s&sslmode=disable\n' "$1" "$PG_SOCKET_DIR"
}
