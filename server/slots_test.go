package server

// len is how many keys have a share.
func (k *keyedSlots) len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.m)
}
