// Package monocleapi is Monocle's crawler API, as status asks it: a crawler's
// commit, through the API server's service proxy.
package monocleapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/monocleconfig"
)

// CrawlerAPI is what status asks Monocle's API about its crawlers.
type CrawlerAPI interface {
	// CommitInfo is what POST /api/2/crawler/get_commit_info answers for a
	// crawler of a workspace and a type of entity (EntityProject, ...).
	CommitInfo(ctx context.Context, workspace, crawler, entity string) (CommitInfo, error)
}

// Entity types of Monocle 1.11.2's CommitInfoRequest
// (schemas/monocle/protob/crawler.proto, EntityType).
const (
	EntityOrganization = "ENTITY_TYPE_ORGANIZATION"
	EntityProject      = "ENTITY_TYPE_PROJECT"
	EntityTaskData     = "ENTITY_TYPE_TASK_DATA"
	EntityUser         = "ENTITY_TYPE_USER"
)

// EntityTypes are the EntityType of each kind of entity a crawler crawls
// (monocleconfig.Workspace.Entities).
var EntityTypes = map[string]string{
	monocleconfig.EntityOrganization: EntityOrganization,
	monocleconfig.EntityProject:      EntityProject,
	monocleconfig.EntityTaskData:     EntityTaskData,
	monocleconfig.EntityUser:         EntityUser,
}

// CommitInfo is a crawler's oldest entity of a type: the one it updates
// next, and the date up to which it has crawled it (the crawler's commit:
// every other entity of that type is at least as recent).
type CommitInfo struct {
	// Entity names it, as "project_name: org/repo".
	Entity       string
	LastCommitAt time.Time
	// NoEntity: the crawler has no entity of that type yet
	// (CommitGetNoEntity).
	NoEntity bool
}

// MonocleAPI is Monocle 1.11.2's API at BaseURL (the API's Service through
// the API server's service proxy, or a test's fake).
type MonocleAPI struct {
	Client  *http.Client
	BaseURL string
}

// ServiceProxyURL is the API server's proxy to the Service's port named
// http (the hook names it so on N-api).
func ServiceProxyURL(host, namespace, service string) string {
	return strings.TrimSuffix(host, "/") + "/api/v1/namespaces/" + url.PathEscape(namespace) +
		"/services/" + url.PathEscape(service) + ":http/proxy"
}

// APIService is the Service of a Monocle's API.
func APIService(name string) string { return instance.For(name).API }

// HTTPError is an answer other than 200.
type HTTPError struct {
	Code int
	Body string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Code, http.StatusText(e.Code), e.Body)
}

// Forbidden: the answer is 403 (for the service proxy, the user may not
// get services/proxy; the built-in view role may not).
func Forbidden(err error) bool {
	var h *HTTPError
	return errors.As(err, &h) && h.Code == http.StatusForbidden
}

// maxAnswer bounds what is read of an answer.
const maxAnswer = 1 << 20

func (m *MonocleAPI) CommitInfo(ctx context.Context, workspace, crawler, entity string) (CommitInfo, error) {
	body, err := json.Marshal(map[string]any{"index": workspace, "crawler": crawler, "entity": entity, "offset": 0})
	if err != nil {
		return CommitInfo{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.BaseURL+"/api/2/crawler/get_commit_info", bytes.NewReader(body))
	if err != nil {
		return CommitInfo{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := m.Client.Do(req)
	if err != nil {
		return CommitInfo{}, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return CommitInfo{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return CommitInfo{}, &HTTPError{resp.StatusCode, Cut(strings.TrimSpace(string(answer)), 200)}
	}
	return decodeCommitInfo(answer)
}

// decodeCommitInfo reads a CommitInfoResponse in Monocle's JSON (proto3,
// its oneofs unnamed, snake_case names): {"error": "CommitGetNoEntity"} or
// {"entity": {"entity": {"project_name": "..."}, "last_commit_at": "..."}}.
func decodeCommitInfo(answer []byte) (CommitInfo, error) {
	var r struct {
		Error  *string `json:"error"`
		Entity *struct {
			Entity       map[string]string `json:"entity"`
			LastCommitAt *time.Time        `json:"last_commit_at"`
		} `json:"entity"`
	}
	if err := json.Unmarshal(answer, &r); err != nil {
		return CommitInfo{}, fmt.Errorf("reading get_commit_info's answer: %w", err)
	}
	switch {
	case r.Error != nil && *r.Error == "CommitGetNoEntity":
		return CommitInfo{NoEntity: true}, nil
	case r.Error != nil:
		// CommitGetUnknownIndex, CommitGetUnknownCrawler: the config the API
		// runs is not the one read here.
		return CommitInfo{}, fmt.Errorf("get_commit_info answered %s", *r.Error)
	case r.Entity == nil || r.Entity.LastCommitAt == nil:
		return CommitInfo{}, fmt.Errorf("get_commit_info answered neither an entity with its last_commit_at nor an error: %s", Cut(string(answer), 200))
	}
	var entity string
	for k, v := range r.Entity.Entity {
		entity = k + ": " + v
	}
	return CommitInfo{Entity: entity, LastCommitAt: r.Entity.LastCommitAt.UTC()}, nil
}

// Cut keeps the first n bytes of s, and says so.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
