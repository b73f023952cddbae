package pods

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
)

// The components the pods report: the crawler is Disabled unless on; each
// carries the refusal that holds it, and no other.
func TestComponents(t *testing.T) {
	n := instance.For("demo")
	crawler := &appsv1.Deployment{}
	observed := wire.Children{Deployments: map[string]*appsv1.Deployment{n.Crawler: crawler}}
	hold := condition.Invalid("secretRef", "missing")
	for _, tc := range []struct {
		name                string
		obs                 wire.Children
		on                  bool
		apiBlock, crawlerBl *condition.FieldError
		api, crawler        condition.Component
	}{
		{"a new Monocle", wire.Children{}, true, nil, nil, condition.Component{Name: "api"}, condition.Component{Name: "crawler"}},
		{"crawler off", wire.Children{}, false, nil, nil, condition.Component{Name: "api"}, condition.Component{Name: "crawler", Off: "Disabled"}},
		{"crawler on, running", observed, true, nil, nil, condition.Component{Name: "api"}, condition.Component{Name: "crawler", Observed: true}},
		{"each held by its own refusal", wire.Children{}, true, nil, hold, condition.Component{Name: "api"}, condition.Component{Name: "crawler", Block: hold}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api, crawler := components(n, tc.obs, tc.on, tc.apiBlock, tc.crawlerBl)
			if api != tc.api || crawler != tc.crawler {
				t.Errorf("components = %+v, %+v; want %+v, %+v", api, crawler, tc.api, tc.crawler)
			}
		})
	}
	// Held as last applied: what runs says whether a crawler is on.
	if f := HeldFacts(n, observed); f.Crawler.Off != "" || !f.Crawler.Observed {
		t.Errorf("HeldFacts' crawler = %+v; want it on, observed", f.Crawler)
	}
	if f := HeldFacts(n, wire.Children{}); f.Crawler.Off != "Disabled" {
		t.Errorf("HeldFacts' crawler, none running = %+v; want Disabled", f.Crawler)
	}
}
