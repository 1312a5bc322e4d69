package streamsonspark.reference;

import java.util.List;
import java.util.Map;

/** A minimal JSON writer (no dependency beyond Kafka): maps keep insertion order, output is indented. */
final class Json {
    private Json() {}

    static String write(final Object value) {
        final StringBuilder out = new StringBuilder();
        write(out, value, 0);
        return out.append('\n').toString();
    }

    /** One line without spaces, as Python's {@code json.dumps(value, separators=(",", ":"))} writes it. */
    @SuppressWarnings("unchecked")
    static String compact(final Object value) {
        final StringBuilder out = new StringBuilder();
        if (value instanceof List) {
            out.append('[');
            final List<Object> list = (List<Object>) value;
            for (int i = 0; i < list.size(); i++) {
                out.append(i > 0 ? "," : "").append(compact(list.get(i)));
            }
            return out.append(']').toString();
        }
        if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (final Map.Entry<String, Object> e : ((Map<String, Object>) value).entrySet()) {
                out.append(first ? "" : ",");
                first = false;
                string(out, e.getKey());
                out.append(':').append(compact(e.getValue()));
            }
            return out.append('}').toString();
        }
        if (value instanceof String) {
            string(out, (String) value);
            return out.toString();
        }
        return String.valueOf(value);
    }

    private static void indent(final StringBuilder out, final int depth) {
        out.append('\n');
        for (int i = 0; i < depth; i++) {
            out.append("  ");
        }
    }

    private static boolean isFlatMap(final Map<?, ?> map) {
        for (final Object item : map.values()) {
            if (item instanceof Map || (item instanceof List && !isScalarList((List<?>) item))) {
                return false;
            }
            if (item instanceof String && ((String) item).indexOf('\n') >= 0) {
                return false;
            }
        }
        return true;
    }

    private static boolean isScalarList(final List<?> list) {
        for (final Object item : list) {
            if (item instanceof Map) {
                return false;
            }
            if (item instanceof List) {
                for (final Object inner : (List<?>) item) {
                    if (inner instanceof Map || inner instanceof List) {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    @SuppressWarnings("unchecked")
    private static void write(final StringBuilder out, final Object value, final int depth) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            string(out, (String) value);
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Map) {
            final Map<String, Object> map = (Map<String, Object>) value;
            if (map.isEmpty()) {
                out.append("{}");
                return;
            }
            if (isFlatMap(map)) {   // a record, a step, a store entry: one line
                out.append('{');
                boolean first = true;
                for (final Map.Entry<String, Object> e : map.entrySet()) {
                    if (!first) {
                        out.append(", ");
                    }
                    first = false;
                    string(out, e.getKey());
                    out.append(": ");
                    write(out, e.getValue(), depth + 1);
                }
                out.append('}');
                return;
            }
            out.append('{');
            boolean first = true;
            for (final Map.Entry<String, Object> e : map.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                indent(out, depth + 1);
                string(out, e.getKey());
                out.append(": ");
                write(out, e.getValue(), depth + 1);
            }
            indent(out, depth);
            out.append('}');
        } else if (value instanceof List) {
            final List<Object> list = (List<Object>) value;
            if (isScalarList(list)) {   // records' headers, store entries: one line
                out.append('[');
                for (int i = 0; i < list.size(); i++) {
                    if (i > 0) {
                        out.append(", ");
                    }
                    write(out, list.get(i), depth + 1);
                }
                out.append(']');
                return;
            }
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                indent(out, depth + 1);
                write(out, list.get(i), depth + 1);
            }
            indent(out, depth);
            out.append(']');
        } else {
            throw new IllegalArgumentException("not JSON: " + value.getClass() + " " + value);
        }
    }

    private static void string(final StringBuilder out, final String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            final char c = s.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }
}
