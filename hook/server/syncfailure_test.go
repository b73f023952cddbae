package server

import (
	"errors"
	"fmt"
	"testing"

	"github.com/change-metrics/monocle-hook/hook"
)

// A Sync error is a status and a reason label: the guard's has its own,
// which an alert always pages on.
func TestSyncFailure(t *testing.T) {
	tests := []struct {
		err    error
		code   int
		reason string
	}{
		{fmt.Errorf("%w: no parent", hook.ErrBadRequest), 400, "malformed"},
		{fmt.Errorf("%w: ConfigMap \"x\" is outside", hook.ErrOutsideMonocle), 500, "outside_monocle"},
		{errors.New("the random source failed"), 500, "internal"},
	}
	for _, tc := range tests {
		if code, reason := syncFailure(tc.err); code != tc.code || reason != tc.reason {
			t.Errorf("%v: %d %s, want %d %s", tc.err, code, reason, tc.code, tc.reason)
		}
	}
}
