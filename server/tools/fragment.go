package tools

import (
	"unicode/utf8"

	"heyaira/server/mcp"
)

// fragmentEnd returns the end of the fragment that starts at start and holds
// at most limit bytes of content, moved back to a UTF-8 character boundary.
//
// content is valid UTF-8 (the provider checked it). start may equal
// len(content): that is the empty final fragment. A start inside a character,
// or a limit too small to hold the character at start, is byte_range_invalid.
func fragmentEnd(content []byte, start, limit int) (int, error) {
	total := len(content)
	if start < 0 || start > total {
		return 0, mcp.NewCoded("byte_range_invalid", "start_byte is beyond the end of the document")
	}
	if start < total && !utf8.RuneStart(content[start]) {
		return 0, mcp.NewCoded("byte_range_invalid", "start_byte is not on a UTF-8 character boundary")
	}
	end := min(start+limit, total)
	// Step back over continuation bytes; a character is at most 4 bytes, so
	// this loop runs at most 3 times.
	for end < total && end > start && !utf8.RuneStart(content[end]) {
		end--
	}
	if end == start && start < total {
		return 0, errBelowCharacter
	}
	return end, nil
}

// errBelowCharacter is a limit too small for the character at start; read
// names the source's fragment limit instead when that was the bound.
var errBelowCharacter = mcp.NewCoded("byte_range_invalid", "max_bytes is smaller than the character at start_byte")
