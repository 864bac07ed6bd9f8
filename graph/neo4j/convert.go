package neo4j

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/toolsmith/toolsmith/graph"
)

// The driver returns INTEGER as int64, FLOAT as float64, LIST as []any and
// STRING as string; nulls are nil. These helpers decode such values leniently
// (a missing property reads as the zero value) and strictly (a value of the
// wrong type is an error).

func getString(r record, key string) (string, error) {
	switch v := r[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", fmt.Errorf("field %q: want string, got %T", key, v)
	}
}

func getInt(r record, key string) (int64, error) {
	switch v := r[key].(type) {
	case nil:
		return 0, nil
	case int64:
		return v, nil
	case int:
		return int64(v), nil
	case float64:
		if v != math.Trunc(v) {
			return 0, fmt.Errorf("field %q: want integer, got %v", key, v)
		}
		return int64(v), nil
	default:
		return 0, fmt.Errorf("field %q: want integer, got %T", key, v)
	}
}

func getFloat(r record, key string) (float64, error) {
	switch v := r[key].(type) {
	case nil:
		return 0, nil
	case float64:
		return v, nil
	case int64:
		return float64(v), nil
	case int:
		return float64(v), nil
	default:
		return 0, fmt.Errorf("field %q: want float, got %T", key, v)
	}
}

func getBool(r record, key string) (bool, error) {
	switch v := r[key].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	default:
		return false, fmt.Errorf("field %q: want boolean, got %T", key, v)
	}
}

func getStrings(r record, key string) ([]string, error) {
	switch v := r[key].(type) {
	case nil:
		return nil, nil
	case []string:
		return v, nil
	case []any:
		out := make([]string, len(v))
		for i, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("field %q[%d]: want string, got %T", key, i, x)
			}
			out[i] = s
		}
		return out, nil
	default:
		return nil, fmt.Errorf("field %q: want list of strings, got %T", key, v)
	}
}

// getVector decodes a LIST<FLOAT> into float32s (nil for null).
func getVector(r record, key string) ([]float32, error) {
	xs, err := getFloats(r, key)
	if xs == nil || err != nil {
		return nil, err
	}
	out := make([]float32, len(xs))
	for i, x := range xs {
		out[i] = float32(x)
	}
	return out, nil
}

// getFloats decodes a LIST<FLOAT> (nil for null; a null element is 0, as
// getFloat reads a null).
func getFloats(r record, key string) ([]float64, error) {
	switch v := r[key].(type) {
	case nil:
		return nil, nil
	case []float64:
		return append([]float64(nil), v...), nil
	case []float32:
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out, nil
	case []any:
		out := make([]float64, len(v))
		for i, x := range v {
			switch f := x.(type) {
			case nil:
			case float64:
				out[i] = f
			case int64:
				out[i] = float64(f)
			default:
				return nil, fmt.Errorf("field %q[%d]: want float, got %T", key, i, x)
			}
		}
		return out, nil
	default:
		return nil, fmt.Errorf("field %q: want list of floats, got %T", key, v)
	}
}

// getMaps decodes a LIST<MAP>.
func getMaps(r record, key string) ([]record, error) {
	switch v := r[key].(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([]record, len(v))
		for i, x := range v {
			m, ok := x.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("field %q[%d]: want map, got %T", key, i, x)
			}
			out[i] = m
		}
		return out, nil
	default:
		return nil, fmt.Errorf("field %q: want list of maps, got %T", key, v)
	}
}

// getSummary decodes the JSON ToolSummary stored in a string field.
func getSummary(r record, key string) (graph.ToolSummary, error) {
	s, err := getString(r, key)
	if err != nil {
		return graph.ToolSummary{}, err
	}
	var sum graph.ToolSummary
	if err := json.Unmarshal([]byte(s), &sum); err != nil {
		return graph.ToolSummary{}, fmt.Errorf("field %q: decode summary: %w", key, err)
	}
	return sum, nil
}

// vectorParam turns a vector into the []float64 the driver sends as
// LIST<FLOAT> (nil stays nil: setting a property to null removes it).
func vectorParam(v []float32) any {
	if v == nil {
		return nil
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// strs returns xs, or an empty list for nil so Cypher sees [] not null.
func strs(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// fromCosineScore converts a cosine vector index score, (1+cos)/2 in [0,1],
// back to the cosine similarity in [-1,1] that the SQLite store returns.
func fromCosineScore(s float64) float64 { return 2*s - 1 }
