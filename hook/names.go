package hook

import "github.com/change-metrics/monocle-hook/internal/instance"

// Every name and label the hook writes is made by internal/instance or by
// the part that writes it, so that two Monocles in one namespace never
// share one (TestTwoInstancesStayApart).

const (
	// Group, version and kind of the parent.
	Group         = instance.Group
	Version       = instance.Version
	Kind          = instance.Kind
	MaxNameLength = instance.MaxNameLength
)
