package snapshot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The API calls below follow Elasticsearch 7.17's reference:
//   https://www.elastic.co/guide/en/elasticsearch/reference/7.17/get-snapshot-repo-api.html
//   https://www.elastic.co/guide/en/elasticsearch/reference/7.17/put-snapshot-repo-api.html
//   https://www.elastic.co/guide/en/elasticsearch/reference/7.17/create-snapshot-api.html
//   https://www.elastic.co/guide/en/elasticsearch/reference/7.17/get-snapshot-api.html
//   https://www.elastic.co/guide/en/elasticsearch/reference/7.17/delete-snapshot-api.html
// fake_test.go checks every request against them.

// Options of one snapshot run.
type Options struct {
	Repository string // registered if missing
	Location   string // the repository's directory, under the node's path.repo
	Prefix     string // of our snapshots' names
	// Name is the snapshot's, one of ours (PREFIX-YYYYMMDD-HHMMSS); ""
	// names it after Now. A run again with the same Name (the Job's next
	// attempt) keeps that snapshot if it succeeded, and takes it again if
	// it did not.
	Name string
	Keep int // successful snapshots of ours to keep, at least 1
	Now  func() time.Time
	Log  *slog.Logger
}

// Result says what a run did.
type Result struct {
	Snapshot string   // the snapshot taken
	Deleted  []string // ours deleted by retention, oldest first
}

// Take registers the repository if it is missing, takes a snapshot of
// Monocle's indices named after the time, waits for it, and deletes ours
// beyond Keep. Any failure is an error, and nothing is deleted unless the
// new snapshot succeeded. ctx bounds the whole run (DefaultTimeout if it
// has no deadline).
func Take(ctx context.Context, c *Client, o Options) (Result, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	if err := cmp.Or(CheckName("repository", o.Repository), CheckLocation(o.Location), CheckName("prefix", o.Prefix)); err != nil {
		return Result{}, err
	}
	if o.Keep < 1 {
		return Result{}, fmt.Errorf("keep is %d: at least 1", o.Keep)
	}
	if o.Name != "" && !ours(o.Prefix, o.Name) {
		return Result{}, fmt.Errorf("name %q is not %s-YYYYMMDD-HHMMSS: retention would never delete it", o.Name, o.Prefix)
	}
	if err := c.ensureRepository(ctx, o.Repository, o.Location, o.Log); err != nil {
		return Result{}, err
	}
	name := cmp.Or(o.Name, Name(o.Prefix, o.Now()))
	taken, err := c.taken(ctx, o.Repository, o.Prefix, o.Name, o.Log)
	if err != nil {
		return Result{}, err
	}
	if taken {
		o.Log.Info("snapshot already taken", "snapshot", name)
	} else {
		o.Log.Info("taking a snapshot", "repository", o.Repository, "snapshot", name, "indices", Indices)
		info, err := c.createSnapshot(ctx, o.Repository, name)
		if err != nil {
			return Result{}, fmt.Errorf("snapshot %s: %w", name, err)
		}
		if err := info.succeeded(); err != nil {
			return Result{}, err
		}
		o.Log.Info("snapshot taken", "snapshot", name, "indices", len(info.Indices), "shards", info.Shards.Total,
			"duration", (time.Duration(info.DurationInMillis) * time.Millisecond).String())
	}

	result := Result{Snapshot: name}
	list, err := c.listSnapshots(ctx, o.Repository, o.Prefix+"-*")
	if err != nil {
		return result, fmt.Errorf("listing snapshots for retention: %w", err)
	}
	for _, s := range expired(list, o.Prefix, o.Keep) {
		if err := c.call(ctx, http.MethodDelete, urlPath("_snapshot", o.Repository, s.Snapshot), nil, nil, nil, false); err != nil {
			return result, fmt.Errorf("deleting snapshot %s: %w", s.Snapshot, err)
		}
		o.Log.Info("snapshot deleted", "snapshot", s.Snapshot, "state", s.State, "keep", o.Keep)
		result.Deleted = append(result.Deleted, s.Snapshot)
	}
	return result, nil
}

// taken tells whether a snapshot of ours named name (not "") exists and
// succeeded. One that did not (an earlier attempt of the same run, failed,
// partial, or cut off while Elasticsearch went on) is deleted, to be taken
// again under its name: it is this run's own.
func (c *Client) taken(ctx context.Context, repo, prefix, name string, log *slog.Logger) (bool, error) {
	if name == "" {
		return false, nil
	}
	list, err := c.listSnapshots(ctx, repo, prefix+"-*")
	if err != nil {
		return false, fmt.Errorf("listing snapshots: %w", err)
	}
	i := slices.IndexFunc(list, func(s snapshotInfo) bool { return s.Snapshot == name })
	if i < 0 {
		return false, nil
	}
	if list[i].succeeded() == nil {
		return true, nil
	}
	if err := c.call(ctx, http.MethodDelete, urlPath("_snapshot", repo, name), nil, nil, nil, false); err != nil {
		return false, fmt.Errorf("deleting snapshot %s (%s) to take it again: %w", name, list[i].State, err)
	}
	log.Info("snapshot deleted, to be taken again", "snapshot", name, "state", list[i].State)
	return false, nil
}

// bounded gives ctx a deadline if it has none: the calls that wait (the
// snapshot, the restore) have no timeout of their own.
func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, DefaultTimeout)
}

// ensureRepository registers an fs repository at location unless one of
// that name exists. One that exists elsewhere or of another type is an
// error, never re-pointed: its snapshots would silently drop out of sight.
func (c *Client) ensureRepository(ctx context.Context, name, location string, log *slog.Logger) error {
	p := urlPath("_snapshot", name)
	var repos map[string]struct {
		Type     string `json:"type"`
		Settings struct {
			Location string `json:"location"`
		} `json:"settings"`
	}
	err := c.call(ctx, http.MethodGet, p, nil, nil, &repos, false)
	var answer *Error
	if errors.As(err, &answer) && answer.Type == "repository_missing_exception" {
		log.Info("registering the repository", "repository", name, "location", location)
		body := map[string]any{"type": "fs", "settings": map[string]any{"location": location}}
		var ack struct {
			Acknowledged bool `json:"acknowledged"`
		}
		// verify (true by default) has every node write to the location:
		// a missing volume or path.repo fails here, not at the snapshot.
		if err := c.call(ctx, http.MethodPut, p, nil, body, &ack, false); err != nil {
			return fmt.Errorf("registering repository %s at %s: %w", name, location, err)
		}
		if !ack.Acknowledged {
			return fmt.Errorf("registering repository %s: not acknowledged", name)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("repository %s: %w", name, err)
	}
	r, ok := repos[name]
	switch {
	case !ok:
		return fmt.Errorf("repository %s: the answer does not name it", name)
	case r.Type != "fs" || r.Settings.Location != location:
		return fmt.Errorf("repository %s is registered as type %q at %q, not fs at %q: left as it is", name, r.Type, r.Settings.Location, location)
	}
	return nil
}

// snapshotInfo is what the create and get snapshot APIs say of a snapshot
// (SnapshotInfo in Elastic's specification).
type snapshotInfo struct {
	Snapshot          string   `json:"snapshot"`
	State             string   `json:"state"`
	Reason            string   `json:"reason"`
	Indices           []string `json:"indices"`
	StartTimeInMillis int64    `json:"start_time_in_millis"`
	DurationInMillis  int64    `json:"duration_in_millis"`
	Failures          []struct {
		Index   string `json:"index"`
		ShardID int    `json:"shard_id"`
		Reason  string `json:"reason"`
	} `json:"failures"`
	Shards struct {
		Total      int `json:"total"`
		Failed     int `json:"failed"`
		Successful int `json:"successful"`
	} `json:"shards"`
}

// createSnapshot takes the snapshot and waits for it in the same request:
// wait_for_completion=true answers with the finished snapshot's state, so
// there is no polling. The get snapshot status API would be the other way,
// but on a named snapshot it reads every shard's file from the repository
// (its reference warns of the cost), and polling adds a loop to bound. The
// command's --timeout bounds the wait; a snapshot still running when it
// expires goes on in Elasticsearch, is reported as this run's failure and
// is judged by the next run's retention like any other.
func (c *Client) createSnapshot(ctx context.Context, repo, name string) (*snapshotInfo, error) {
	return c.completed(ctx, http.MethodPut, urlPath("_snapshot", repo, name), "snapshot", map[string]any{
		"indices":              Indices,
		"ignore_unavailable":   false,
		"include_global_state": false,
		"metadata":             map[string]any{"taken_by": "monocle-hook snapshot"},
	})
}

// completed sends a snapshot's creation or restore with
// wait_for_completion=true: the answer comes once it ended, with what it
// did as "snapshot" (a SnapshotInfo, or a RestoreInfo: snapshotInfo's
// name, indices and shards). what names it if the answer lacks it.
func (c *Client) completed(ctx context.Context, method, p, what string, body map[string]any) (*snapshotInfo, error) {
	var answer struct {
		Snapshot *snapshotInfo `json:"snapshot"`
	}
	if err := c.call(ctx, method, p, url.Values{"wait_for_completion": {"true"}}, body, &answer, true); err != nil {
		return nil, err
	}
	if answer.Snapshot == nil {
		return nil, fmt.Errorf("the answer holds no %s", what)
	}
	return answer.Snapshot, nil
}

// succeeded is nil for a complete snapshot: SUCCESS with no failed shard.
// FAILED, PARTIAL, INCOMPATIBLE (and IN_PROGRESS, which a finished wait
// should never give) are errors that say why.
func (s snapshotInfo) succeeded() error {
	if s.State == "SUCCESS" && s.Shards.Failed == 0 {
		return nil
	}
	msg := fmt.Sprintf("snapshot %s is %s", s.Snapshot, s.State)
	if s.Reason != "" {
		msg += ": " + s.Reason
	}
	if s.Shards.Failed > 0 {
		msg += fmt.Sprintf(" (%d of %d shards failed", s.Shards.Failed, s.Shards.Total)
		for i, f := range s.Failures {
			if i == 3 {
				msg += ", ..."
				break
			}
			msg += fmt.Sprintf("; [%s][%d] %s", f.Index, f.ShardID, f.Reason)
		}
		msg += ")"
	}
	return errors.New(msg)
}

// listSnapshots lists the repository's snapshots whose names match pattern.
// Elasticsearch 7.15 and later answer {"snapshots": [...], "total",
// "remaining"} (SnapshotGetResponse in Elastic's specification); without
// size, remaining is 0: every match is in the answer.
func (c *Client) listSnapshots(ctx context.Context, repo, pattern string) ([]snapshotInfo, error) {
	var answer struct {
		Snapshots []snapshotInfo `json:"snapshots"`
		Remaining int            `json:"remaining"`
	}
	if err := c.call(ctx, http.MethodGet, urlPath("_snapshot", repo, pattern), nil, nil, &answer, false); err != nil {
		return nil, err
	}
	if answer.Remaining != 0 {
		return nil, fmt.Errorf("the answer left %d snapshots out", answer.Remaining)
	}
	return answer.Snapshots, nil
}

// expired picks what retention deletes, oldest first: the snapshots of
// ours (named by Name for prefix) that started before the keep-th newest
// successful one of ours. Counting only successes means failed runs never
// push a good snapshot out; a failed one is deleted once it is older than
// the keep-th success. Others' snapshots are never picked, nor ours still
// in progress (deleting one would abort it), nor any while fewer than keep
// of ours succeeded.
func expired(list []snapshotInfo, prefix string, keep int) []snapshotInfo {
	mine := slices.DeleteFunc(slices.Clone(list), func(s snapshotInfo) bool { return !ours(prefix, s.Snapshot) })
	slices.SortFunc(mine, func(a, b snapshotInfo) int {
		return cmp.Or(cmp.Compare(a.StartTimeInMillis, b.StartTimeInMillis), strings.Compare(a.Snapshot, b.Snapshot))
	})
	successes := 0
	for i := len(mine) - 1; i >= 0; i-- {
		if mine[i].State != "SUCCESS" {
			continue
		}
		if successes++; successes == keep {
			return slices.DeleteFunc(mine[:i], func(s snapshotInfo) bool { return s.State == "IN_PROGRESS" })
		}
	}
	return nil
}
