// Package cursor implements the opaque continuation cursors of HeyAira's MCP
// tools: the next_cursor of git_document_get and the pagination cursors of
// memory_list and task_list.
//
// A cursor is authenticated, not encrypted. Whoever holds one can read what
// it says (project, principal, source, commit, path, offset, file hash,
// expiry), all of which the tool response that carried it already told them.
// Without a key nobody can forge a cursor, change a single bit of one, move it
// to another kind, or extend its lifetime.
//
// # What Decode guarantees
//
// Decode returns a Cursor only when every byte of the string was produced by
// Encode under one of the codec's keys, and the cursor has not expired. Every
// other input gets ErrInvalid, except an authentic cursor whose expiry has
// passed, which gets ErrExpired: the MAC is checked before the expiry, so a
// forged or altered cursor never learns whether it would have been fresh.
// Each cursor has exactly one string form: Encode(Decode(s)) == s for every
// accepted s (the encoding is strict unpadded base64url, newlines and
// non-zero padding bits are refused, and the payload is length-prefixed with
// no trailing bytes). Errors are the two sentinels and never contain the
// cursor. A Codec is immutable and safe for concurrent use.
//
// # What the caller must do
//
// A cursor is a handle, not a credential (Google AIP-158; MCP "state handle
// hijacking"). Decode does not know who is asking, so after it succeeds the
// caller must:
//
//   - compare Kind with the tool being called, Project and Principal with the
//     authenticated request, and Source with the source_id argument, and treat
//     any difference as cursor_invalid;
//   - authorize the request exactly as it would one without a cursor;
//   - check Offset again against the bytes it has just read (Decode only
//     promises Offset >= 0), and FileSHA256 against the file's hash
//     (a different hash is provider_inconsistent);
//   - never log the cursor string, and keep field lengths within what
//     Encode accepts (see MaxLen; a 1024-byte path fits with room to spare).
//
// # Format, version 1
//
//	cursor  = base64url-no-padding(version | key id | body | mac), ≤ MaxLen characters
//	version = 0x01
//	key id  = the first 4 bytes of SHA-256(key)
//	body    = kind, project, principal, source, commit, path, file_sha256,
//	          each as a big-endian uint16 length and that many bytes,
//	          then offset (≥ 0) and expires (Unix seconds, years 1970–9999)
//	          as big-endian int64
//	mac     = HMAC-SHA-256(key, "heyaira cursor v1\x00" | version | key id | body)
//
// The label separates cursor MACs from any other use of the key; Kind, inside
// the MAC, separates the uses of cursors from each other.
//
// # Keys
//
// A Codec holds one or more keys of at least 32 bytes. The first key signs;
// every key verifies, and the key id in a cursor selects the key directly.
// The server reads the key file once, at start-up; every replica must hold
// the same keys, and rotating them takes a restart per step (docs/deploy.md,
// "The cursor key"). Cursors signed with a deleted key are invalid. Key ids
// are not secret; KeyIDs returns them for the start-up log.
package cursor
