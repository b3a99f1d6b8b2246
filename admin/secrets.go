package admin

import (
	"errors"
	"fmt"
	"time"

	"heyaira/cursor"
	"heyaira/internal/secretfile"
	"heyaira/oauth"
)

// mintSlack is added to the expiry a command embeds in what it mints, so
// that a clock on this machine a little behind the database's never makes
// the server refuse a token or link the database still holds valid.
const mintSlack = time.Minute

// secrets makes the command read the server's key file before it opens the
// database: a legacy token or sign-in link carries a MAC under a key
// derived from it (oauth.Secrets), or the server refuses it unseen. The
// returned function gives the keys once the checks have run.
func (f *flags) secrets() func() *oauth.Secrets {
	var s *oauth.Secrets
	f.beforeOpen = append(f.beforeOpen, func() error {
		path := f.e.getenv("HEYAIRA_CURSOR_KEY_FILE")
		if path == "" {
			return errors.New("HEYAIRA_CURSOR_KEY_FILE is not set: this command signs what it issues with the server's key file; " +
				"set it to the file serve uses")
		}
		b, err := secretfile.Read(path)
		if err != nil {
			return fmt.Errorf("HEYAIRA_CURSOR_KEY_FILE: %w", err)
		}
		c, err := cursor.ParseKeys(b)
		if err != nil {
			return fmt.Errorf("HEYAIRA_CURSOR_KEY_FILE %s: %w", path, err)
		}
		s = oauth.NewSecrets(c.Derive(oauth.KeyLabel))
		return nil
	})
	return func() *oauth.Secrets { return s }
}
