module heyaira

go 1.26

require github.com/lib/pq v1.12.3

// Test dependencies.
require github.com/google/go-cmp v0.7.0
