package plugin

// What the external tests reach of fairness across queues.

// RoomFreed counts room freed, as a pod's end or a node's addition does (giveway.go).
func (p *Plugin) RoomFreed() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.roomFreed()
}
