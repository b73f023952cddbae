// Package hook is the Metacontroller CompositeController hook that deploys
// Monocle.
//
// Sync is a pure function from a sync request (a Monocle, its observed
// children and related objects) to the answer: the children it should have
// and its status. It does no I/O: Metacontroller reads and applies, the hook
// never calls the API server, and the same request gives the same bytes, so
// that the golden tests hold every answer and render and check run it
// offline. A spec the hook cannot honour is a condition, not an error: the
// children it concerns are answered as last applied, so that a mistake
// deletes or rolls nothing.
//
// Its HTTP face, the server of /sync and /customize with the memory budget
// and the metrics, is the package hook/server, above this one.
//
// One hook serves every Monocle of a cluster, so nothing a client sends may
// cost memory before it is bounded or charged: Budget charges each request in
// flight its estimated peak heap before it is spent (hook/server), the spec is walked
// against the CRD's bounds before it is decoded, and checkBoundary keeps
// every child inside its own Monocle. ARCHITECTURE.md follows a request's
// path through the files.
package hook
