package snapshot

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The API calls below, besides those of take.go, follow Elasticsearch
// 7.17's reference:
//   https://www.elastic.co/guide/en/elasticsearch/reference/7.17/cat-indices.html
//   https://www.elastic.co/guide/en/elasticsearch/reference/7.17/indices-close.html
//   https://www.elastic.co/guide/en/elasticsearch/reference/7.17/restore-snapshot-api.html
//   https://www.elastic.co/guide/en/elasticsearch/reference/7.17/cluster-health.html

// RestoreOptions name the snapshot to restore.
type RestoreOptions struct {
	Repository string // registered if missing: a new Elasticsearch on an old snapshot volume
	Location   string
	Snapshot   string
	Log        *slog.Logger
}

// RestoreResult says what a restore did.
type RestoreResult struct {
	Restored  []string // Monocle's indices in the snapshot, now restored
	Closed    []string // those of them that were open and were closed first
	Untouched []string // Monocle's indices the snapshot does not hold, left as they are
}

// Restore restores Monocle's indices from a snapshot into the running
// Elasticsearch, in place: the snapshot must be SUCCESS; those of its
// Monocle indices that exist are closed (a restore only replaces a closed
// index), then all of them are restored and waited for until their primary
// shards are active. Closing, not deleting: if the restore fails, the
// current data is still there (reopen with POST /<index>/_open).
//
// Monocle's API and crawler must be stopped first: they write to these
// indices and would fail on closed ones. Monocle indices that the snapshot
// does not hold (a workspace added since) are left as they are. ctx bounds
// the whole restore (DefaultTimeout if it has no deadline).
func Restore(ctx context.Context, c *Client, o RestoreOptions) (RestoreResult, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	if err := cmp.Or(CheckName("repository", o.Repository), CheckLocation(o.Location), CheckName("snapshot", o.Snapshot)); err != nil {
		return RestoreResult{}, err
	}
	if err := c.ensureRepository(ctx, o.Repository, o.Location, o.Log); err != nil {
		return RestoreResult{}, err
	}
	info, err := c.getSnapshot(ctx, o.Repository, o.Snapshot)
	if err != nil {
		return RestoreResult{}, err
	}
	if err := info.succeeded(); err != nil {
		return RestoreResult{}, fmt.Errorf("not restoring: %w", err)
	}
	r := RestoreResult{Restored: slices.DeleteFunc(info.Indices, func(index string) bool { return !isMonocleIndex(index) })}
	slices.Sort(r.Restored)
	if len(r.Restored) == 0 {
		return RestoreResult{}, fmt.Errorf("snapshot %s holds no Monocle index (%s)", o.Snapshot, Indices)
	}

	existing, err := c.monocleIndices(ctx)
	if err != nil {
		return RestoreResult{}, err
	}
	for _, index := range slices.Sorted(maps.Keys(existing)) {
		switch {
		case !slices.Contains(r.Restored, index):
			r.Untouched = append(r.Untouched, index)
		case existing[index] == "open":
			r.Closed = append(r.Closed, index)
		}
	}
	if len(r.Untouched) > 0 {
		o.Log.Info("left as they are: Monocle indices the snapshot does not hold", "indices", r.Untouched)
	}
	if len(r.Closed) > 0 {
		o.Log.Info("closing the indices to restore", "indices", r.Closed)
		if err := c.closeIndices(ctx, r.Closed); err != nil {
			return r, err
		}
	}

	o.Log.Info("restoring", "repository", o.Repository, "snapshot", o.Snapshot, "indices", r.Restored)
	if err := c.restore(ctx, o.Repository, o.Snapshot, r.Restored); err != nil {
		return r, fmt.Errorf("restoring %s (closed indices stay closed until restored or reopened): %w", o.Snapshot, err)
	}
	if err := c.waitActive(ctx, r.Restored); err != nil {
		return r, err
	}
	o.Log.Info("restored: every primary shard is active", "snapshot", o.Snapshot, "indices", len(r.Restored))
	return r, nil
}

// getSnapshot is the get snapshot API on one name.
func (c *Client) getSnapshot(ctx context.Context, repo, name string) (snapshotInfo, error) {
	list, err := c.listSnapshots(ctx, repo, name)
	if err != nil {
		return snapshotInfo{}, fmt.Errorf("snapshot %s: %w", name, err)
	}
	if len(list) != 1 || list[0].Snapshot != name {
		return snapshotInfo{}, fmt.Errorf("snapshot %s: the answer lists %d snapshots, not that one", name, len(list))
	}
	return list[0], nil
}

// monocleIndices lists the cluster's Monocle indices with their status
// (open or close), closed ones included.
func (c *Client) monocleIndices(ctx context.Context) (map[string]string, error) {
	var rows []struct {
		Index  string `json:"index"`
		Status string `json:"status"`
	}
	query := url.Values{"format": {"json"}, "h": {"index,status"}, "expand_wildcards": {"all"}}
	// "monocle.*": the config index is named, not a pattern; the wildcard
	// spares a 404 when it does not exist. isMonocleIndex filters.
	if err := c.call(ctx, http.MethodGet, urlPath("_cat", "indices", "monocle.*"), query, nil, &rows, false); err != nil {
		return nil, fmt.Errorf("listing indices: %w", err)
	}
	existing := map[string]string{}
	for _, row := range rows {
		if isMonocleIndex(row.Index) {
			existing[row.Index] = row.Status
		}
	}
	return existing, nil
}

// closeIndices closes the named indices and checks that each one closed.
func (c *Client) closeIndices(ctx context.Context, indices []string) error {
	var answer struct {
		Acknowledged bool `json:"acknowledged"`
		Indices      map[string]struct {
			Closed bool `json:"closed"`
		} `json:"indices"`
	}
	if err := c.call(ctx, http.MethodPost, urlPath(strings.Join(indices, ","), "_close"), nil, nil, &answer, false); err != nil {
		return fmt.Errorf("closing %v: %w", indices, err)
	}
	if !answer.Acknowledged {
		return fmt.Errorf("closing %v: not acknowledged", indices)
	}
	for _, index := range indices {
		if !answer.Indices[index].Closed {
			return fmt.Errorf("closing %v: %s did not close", indices, index)
		}
	}
	return nil
}

// restore runs the restore and waits for it: with wait_for_completion the
// answer comes once every restored shard's recovery ended, with counts.
// Only the given indices and never the global state (cluster settings,
// templates): the cluster is the Monocle's, its own state stays.
func (c *Client) restore(ctx context.Context, repo, name string, indices []string) error {
	s, err := c.completed(ctx, http.MethodPost, urlPath("_snapshot", repo, name, "_restore"), "restore", map[string]any{
		"indices":              strings.Join(indices, ","),
		"ignore_unavailable":   false,
		"include_global_state": false,
	})
	if err != nil {
		return err
	}
	if s.Shards.Failed > 0 || s.Shards.Successful != s.Shards.Total {
		return fmt.Errorf("%d of %d shards failed to restore", s.Shards.Total-s.Shards.Successful, s.Shards.Total)
	}
	got := slices.Sorted(slices.Values(s.Indices))
	if !slices.Equal(got, indices) {
		return fmt.Errorf("restored %v, not %v", got, indices)
	}
	return nil
}

// waitActive waits, within ctx's deadline, until the indices' primary
// shards are all active (health yellow or better: one node and no replicas
// is green). Elasticsearch answers 408 when its timeout passes first.
func (c *Client) waitActive(ctx context.Context, indices []string) error {
	// Elasticsearch's timeout a few seconds short of ours, so that its 408
	// (with the health) comes before our cut.
	wait := time.Minute
	if deadline, ok := ctx.Deadline(); ok {
		wait = max(time.Until(deadline)-5*time.Second, time.Second)
	}
	query := url.Values{"wait_for_status": {"yellow"}, "timeout": {fmt.Sprintf("%ds", wait/time.Second)}}
	var health struct {
		Status   string `json:"status"`
		TimedOut bool   `json:"timed_out"`
	}
	err := c.call(ctx, http.MethodGet, urlPath("_cluster", "health", strings.Join(indices, ",")), query, nil, &health, true)
	if err != nil {
		return fmt.Errorf("waiting for the restored indices: %w", err)
	}
	if health.TimedOut || (health.Status != "green" && health.Status != "yellow") {
		return fmt.Errorf("the restored indices are %s (timed out: %t)", health.Status, health.TimedOut)
	}
	return nil
}
