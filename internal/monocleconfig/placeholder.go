// Package monocleconfig: PLACEHOLDER until the real validator lands.
package monocleconfig

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

const MaxBytes = 256 << 10

type Workspace struct {
	Name   string
	Idents any
}

type Config struct {
	Workspaces []Workspace
	Ignored    []string
}

func Parse(data []byte, env func(string) bool) (*Config, error) {
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("over %d bytes", MaxBytes)
	}
	var config struct {
		Workspaces []struct {
			Name   string `json:"name"`
			Idents any    `json:"idents"`
		} `json:"workspaces"`
	}
	if err := yaml.Unmarshal(data, &config); err != nil {
		return nil, err
	}
	c := &Config{}
	for _, w := range config.Workspaces {
		if w.Name == "" || w.Name != fmt.Sprint(w.Name) {
			return nil, fmt.Errorf("name required")
		}
		c.Workspaces = append(c.Workspaces, Workspace{w.Name, w.Idents})
	}
	return c, nil
}
