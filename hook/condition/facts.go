package condition

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// Component is what a part says of one of its components (Elasticsearch,
// the API, the crawler) for the status: how its workload runs, and the
// refusal that holds it. The hook merges them into the status's columns,
// Ready and Progressing.
type Component struct {
	// Name is the component's word in the status's messages.
	Name string
	// Off, when not "", is the status's column for a component the spec
	// leaves out (External, Disabled): none to wait for.
	Off string
	// Observed: its workload exists. Ready: it runs its latest template,
	// every replica ready.
	Observed, Ready bool
	// Image is its workload's first container's image, "" when none.
	Image string
	// Block, when not nil, is the refusal that holds it as it runs, or
	// withholds it (not observed): set exactly when its part does so.
	Block *FieldError
}

// DeploymentComponent is what the Deployment d says of a component.
func DeploymentComponent(name string, d *appsv1.Deployment) Component {
	c := Component{Name: name, Observed: d != nil, Ready: DeploymentReady(d)}
	if d != nil {
		c.Image = firstImage(d.Spec.Template.Spec.Containers)
	}
	return c
}

// StatefulSetComponent is what the StatefulSet s says of a component.
func StatefulSetComponent(name string, s *appsv1.StatefulSet) Component {
	c := Component{Name: name, Observed: s != nil, Ready: StatefulSetReady(s)}
	if s != nil {
		c.Image = firstImage(s.Spec.Template.Spec.Containers)
	}
	return c
}

// firstImage is the image of a pod's first container.
func firstImage(containers []corev1.Container) string {
	if len(containers) == 0 {
		return ""
	}
	return containers[0].Image
}

// Sessions is what the pods' part says of the API's sessions, which the
// API's Service keeps to (the access part's).
type Sessions struct {
	// Sticky, when not 0, is the API's replicas when its config logs in
	// with OIDC: each API process keeps its logins' state in memory
	// (src/Monocle/Api/Jwt.hs, the session store), so a login's callback
	// must reach the replica that began it.
	Sticky int32
	// AsObserved: the workloads are held as they run, and the Service
	// keeps the affinity it has, as the API's config wanted it.
	AsObserved bool
}
