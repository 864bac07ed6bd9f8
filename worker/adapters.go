package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/modules"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/tool"
)

// ToolRegistrar is the part of registry.Service module discovery uses.
type ToolRegistrar interface {
	Register(ctx context.Context, req registry.Request) (registry.Result, error)
	Update(ctx context.Context, id string, req registry.Request) (registry.Result, error)
}

// RegistryRegistrar adapts registry.Service to modules.Registrar: a tool seen
// for the first time is registered, a known one updated (an unchanged
// manifest writes nothing), so periodic discovery is idempotent.
func RegistryRegistrar(reg ToolRegistrar) modules.Registrar {
	return modules.RegistrarFunc(func(ctx context.Context, m tool.Manifest) error {
		raw, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("worker: register %s: %w", m.ToolID, err)
		}
		req := registry.Request{Manifest: raw}
		_, err = reg.Register(ctx, req)
		if errors.Is(err, fault.ErrConflict) {
			_, err = reg.Update(ctx, m.ToolID, req)
		}
		if err != nil {
			return fmt.Errorf("worker: register %s: %w", m.ToolID, err)
		}
		return nil
	})
}
