// Package server is the hook's HTTP face: it reads /sync and /customize,
// decodes, calls hook.Sync or hook.Customize and encodes the answer, next
// to the health endpoints and the metrics. One hook serves every Monocle of
// a cluster, so nothing a client sends may cost memory before it is
// bounded or charged: Budget charges each request in flight its estimated
// peak heap before it is spent, and a body over wire.MaxBodyBytes, or one
// that falls behind, is refused. ARCHITECTURE.md has the whole defence.
package server
