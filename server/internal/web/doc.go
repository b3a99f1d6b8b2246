// Package web is what every HTTP handler of the server shares and no trust
// domain owns: writing JSON (write.go) and decoding it strictly (json.go), the request
// id, the access log and the other middleware (middleware.go), the client's
// address behind trusted proxies (proxies.go) and its network keys (clientaddr.go), and
// the token buckets and keyed semaphores limits are made of (ratelimit.go,
// slots.go). It imports only the standard library and server/metrics.
package web
