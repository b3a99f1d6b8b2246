package store

import "context"

// SigninLinkOwner is whose sign-in link it is: what the sign-in page shows
// before the link is used, so that a forwarded link cannot sign someone in
// as another principal without their noticing.
type SigninLinkOwner struct {
	PrincipalID   string
	PrincipalName string
	AccountName   string
}

const selectSigninLinkOwnerSQL = `
	SELECT u.id, u.name, a.name
	FROM signin_links l JOIN principals u ON u.id = l.principal_id JOIN accounts a ON a.id = u.account_id
	WHERE l.token_hash = $1 AND l.used_at IS NULL AND l.revoked_at IS NULL AND l.expires_at > now()
	  AND u.disabled_at IS NULL`

// SigninLinkOwner returns the owner of the usable sign-in link whose secret
// hashes to linkHash, or ErrNotFound for an unknown, used or expired link.
// It changes nothing.
func (db *DB) SigninLinkOwner(ctx context.Context, linkHash []byte) (SigninLinkOwner, error) {
	return queryOne(ctx, db, "signin link owner", func(row sqlScanner) (o SigninLinkOwner, err error) {
		err = row.Scan(&o.PrincipalID, &o.PrincipalName, &o.AccountName)
		return o, err
	}, selectSigninLinkOwnerSQL, linkHash)
}
