package admin

// Test-only exports for the external test package admin_test.

// Commands returns the command table (name, usage line, short help), in the
// order help prints it. Every command also accepts --json and --help.
func Commands() []Command {
	out := make([]Command, len(commands))
	copy(out, commands)
	return out
}
