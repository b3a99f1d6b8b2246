// Package app is the heyaira program: Run dispatches the command line to
// serve, the admin CLI or version, and Serve reads the configuration (the
// HEYAIRA_* variables), the key files, and the database, then runs the HTTP
// server until a signal drains it. It owns what only a process has: the
// environment, start-up refusals with their reasons, the wait for
// PostgreSQL, the janitor that purges expired rows, and the GC target.
// Tests reach its seams through Hooks, which the production main never sets.
package app
