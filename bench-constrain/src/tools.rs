//! Realistic tool-parameter schemas (function-calling style), generated deterministically for
//! the benchmark: nested objects, enums, arrays (of scalars, of objects, of arrays), optional
//! fields, formats, unanchored patterns, `$ref`/`$defs` (a few recursive), `anyOf` (nullable
//! values and alternatives). Every object is closed (`additionalProperties: false`) and
//! declares at least one required property, as strict tools ask.
//!
//! The set is written to `schemas/tools.json`; the generator is the source of truth, the file
//! is there so other engines (or a reviewer) can read the exact schemas.

use serde_json::{json, Map, Value};

use crate::rng::Rng;

const VERBS: &[&str] = &[
    "get",
    "list",
    "search",
    "create",
    "update",
    "delete",
    "schedule",
    "send",
    "cancel",
    "book",
    "export",
    "import",
    "summarize",
    "translate",
    "convert",
    "validate",
    "archive",
    "assign",
    "approve",
    "refund",
    "track",
    "estimate",
    "sync",
    "upload",
    "lookup",
    "notify",
    "reserve",
];

const NOUNS: &[&str] = &[
    "weather",
    "forecast",
    "flight",
    "hotel",
    "calendar_event",
    "meeting",
    "email",
    "invoice",
    "order",
    "shipment",
    "customer",
    "ticket",
    "issue",
    "pull_request",
    "repository",
    "document",
    "spreadsheet",
    "report",
    "payment",
    "subscription",
    "product",
    "inventory",
    "playlist",
    "recipe",
    "restaurant",
    "reservation",
    "contact",
    "task",
    "reminder",
    "expense",
    "budget",
    "stock_quote",
    "exchange_rate",
    "route",
    "ride",
    "parking_spot",
    "appointment",
    "prescription",
    "lead",
    "campaign",
    "user",
    "team",
    "channel",
    "message",
    "file",
    "backup",
    "deployment",
    "incident",
    "alert",
    "metric",
    "log_entry",
    "dataset",
    "model_run",
    "translation",
    "podcast",
];

const STRING_NAMES: &[&str] = &[
    "query",
    "title",
    "name",
    "description",
    "city",
    "location",
    "notes",
    "subject",
    "body",
    "message",
    "keyword",
    "address_line",
    "company",
    "department",
    "reason",
    "comment",
    "label",
    "category",
    "author",
    "destination",
    "origin",
    "username",
    "display_name",
    "summary",
    "search_term",
    "product_name",
    "customer_name",
    "language",
    "region",
    "timezone",
    "path",
    "branch",
    "repository",
    "channel_name",
    "hostname",
    "url",
    "email",
    "phone_number",
];

const INT_NAMES: &[&str] = &[
    "limit",
    "offset",
    "page",
    "page_size",
    "count",
    "quantity",
    "days",
    "nights",
    "guests",
    "max_results",
    "retries",
    "priority_level",
    "duration_minutes",
    "year",
    "age",
    "rooms",
    "timeout_seconds",
    "port",
    "seats",
    "passengers",
    "version",
];

const NUM_NAMES: &[&str] = &[
    "amount",
    "price",
    "latitude",
    "longitude",
    "temperature",
    "threshold",
    "budget",
    "discount_rate",
    "weight_kg",
    "distance_km",
    "confidence",
    "tip_percent",
    "max_price",
    "min_rating",
    "score",
];

const BOOL_NAMES: &[&str] = &[
    "include_archived",
    "dry_run",
    "notify",
    "is_public",
    "recursive",
    "include_details",
    "send_copy",
    "urgent",
    "refundable",
    "all_day",
    "case_sensitive",
    "overwrite",
    "verbose",
    "exact_match",
    "include_inactive",
];

/// (name, values)
const ENUMS: &[(&str, &[&str])] = &[
    ("unit", &["celsius", "fahrenheit", "kelvin"]),
    (
        "status",
        &["open", "in_progress", "blocked", "resolved", "closed"],
    ),
    ("priority", &["low", "medium", "high", "critical"]),
    ("sort_order", &["asc", "desc"]),
    (
        "sort_by",
        &["created_at", "updated_at", "relevance", "price", "rating"],
    ),
    (
        "cabin_class",
        &["economy", "premium_economy", "business", "first"],
    ),
    ("format", &["pdf", "csv", "xlsx", "json", "html"]),
    ("visibility", &["private", "internal", "public"]),
    (
        "payment_method",
        &["card", "bank_transfer", "paypal", "apple_pay", "invoice"],
    ),
    (
        "frequency",
        &["once", "daily", "weekly", "monthly", "yearly"],
    ),
    (
        "travel_mode",
        &["driving", "walking", "bicycling", "transit"],
    ),
    ("severity", &["info", "warning", "error", "fatal"]),
    ("environment", &["development", "staging", "production"]),
    ("tone", &["formal", "neutral", "friendly", "concise"]),
    ("role", &["viewer", "editor", "admin", "owner"]),
    ("size", &["xs", "s", "m", "l", "xl"]),
    ("meal_type", &["breakfast", "lunch", "dinner", "snack"]),
    ("granularity", &["minute", "hour", "day", "week", "month"]),
];

/// (name, format)
const FORMATTED: &[(&str, &str)] = &[
    ("start_date", "date"),
    ("end_date", "date"),
    ("due_date", "date"),
    ("birth_date", "date"),
    ("check_in", "date"),
    ("check_out", "date"),
    ("departure_time", "date-time"),
    ("created_after", "date-time"),
    ("created_before", "date-time"),
    ("scheduled_at", "date-time"),
    ("remind_at", "date-time"),
    ("start_time", "time"),
    ("end_time", "time"),
    ("opening_time", "time"),
    ("id", "uuid"),
    ("customer_id", "uuid"),
    ("order_id", "uuid"),
    ("request_id", "uuid"),
    ("account_id", "uuid"),
];

/// (name, pattern): unanchored, as the subset allows no `^` / `$`.
const PATTERNED: &[(&str, &str)] = &[
    ("currency", "[A-Z]{3}"),
    ("country_code", "[A-Z]{2}"),
    ("postal_code", "[0-9]{5}(-[0-9]{4})?"),
    ("airport_code", "[A-Z]{3}"),
    ("color", "#[0-9a-fA-F]{6}"),
    ("sku", "[A-Z]{3}-[0-9]{4}"),
    ("ticket_key", "[A-Z]{2,5}-[0-9]{1,5}"),
    ("phone", "\\+[1-9][0-9]{6,14}"),
    ("slug", "[a-z0-9]+(-[a-z0-9]+)*"),
    ("semver", "[0-9]+\\.[0-9]+\\.[0-9]+"),
    ("iban_prefix", "[A-Z]{2}[0-9]{2}"),
];

const ARRAY_NAMES: &[&str] = &[
    "tags",
    "labels",
    "recipients",
    "attendees",
    "keywords",
    "items",
    "ids",
    "fields",
    "emails",
    "languages",
    "cities",
    "steps",
    "filters",
    "columns",
    "assignees",
    "scopes",
    "stops",
];

const OBJECT_NAMES: &[&str] = &[
    "filter",
    "options",
    "settings",
    "preferences",
    "criteria",
    "metadata",
    "window",
    "target",
    "source",
    "constraints",
    "notification",
    "pagination",
    "schedule",
    "details",
    "payload",
];

/// An object schema with `properties` and `required`, closed (`additionalProperties: false`).
fn closed_object(properties: Value, required: Value) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false
    })
}

/// Reusable definitions: name -> schema (may reference other definitions).
fn definition(name: &str) -> Value {
    match name {
        "address" => closed_object(
            json!({
                "street": {"type": "string"},
                "city": {"type": "string"},
                "postal_code": {"type": "string", "pattern": "[0-9]{5}"},
                "country_code": {"type": "string", "pattern": "[A-Z]{2}"}
            }),
            json!(["street", "city", "country_code"]),
        ),
        "money" => closed_object(
            json!({
                "amount": {"type": "number"},
                "currency": {"type": "string", "pattern": "[A-Z]{3}"}
            }),
            json!(["amount", "currency"]),
        ),
        "person" => closed_object(
            json!({
                "name": {"type": "string"},
                "email": {"type": "string"},
                "role": {"type": "string", "enum": ["owner", "member", "guest"]}
            }),
            json!(["name"]),
        ),
        "date_range" => closed_object(
            json!({
                "start": {"type": "string", "format": "date"},
                "end": {"type": "string", "format": "date"}
            }),
            json!(["start"]),
        ),
        "geo_point" => closed_object(
            json!({
                "lat": {"type": "number"},
                "lon": {"type": "number"}
            }),
            json!(["lat", "lon"]),
        ),
        "attachment" => closed_object(
            json!({
                "filename": {"type": "string"},
                "mime_type": {"type": "string", "enum": ["application/pdf", "image/png", "image/jpeg", "text/plain"]},
                "size_bytes": {"type": "integer"}
            }),
            json!(["filename"]),
        ),
        "line_item" => closed_object(
            json!({
                "sku": {"type": "string", "pattern": "[A-Z]{3}-[0-9]{4}"},
                "quantity": {"type": "integer"},
                "unit_price": {"$ref": "#/$defs/money"}
            }),
            json!(["sku", "quantity"]),
        ),
        "recurrence" => closed_object(
            json!({
                "freq": {"type": "string", "enum": ["daily", "weekly", "monthly", "yearly"]},
                "interval": {"type": "integer"},
                "until": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]}
            }),
            json!(["freq"]),
        ),
        // Recursive: a category tree (unrolled to the engines' recursion limits).
        "category" => closed_object(
            json!({
                "name": {"type": "string"},
                "subcategories": {"type": "array", "items": {"$ref": "#/$defs/category"}}
            }),
            json!(["name"]),
        ),
        _ => unreachable!("unknown definition {name}"),
    }
}

const DEFS: &[&str] = &[
    "address",
    "money",
    "person",
    "date_range",
    "geo_point",
    "attachment",
    "line_item",
    "recurrence",
];

/// The definitions `name` refers to, itself included, in a stable order.
fn with_dependencies(name: &str, out: &mut Vec<String>) {
    if out.iter().any(|n| n == name) {
        return;
    }
    out.push(name.to_string());
    if name == "line_item" {
        with_dependencies("money", out);
    }
}

struct Gen<'a> {
    rng: &'a mut Rng,
    defs: Vec<String>,
}

impl Gen<'_> {
    fn describe(&mut self, mut schema: Value, text: &str) -> Value {
        if self.rng.chance(0.35) {
            schema["description"] = Value::String(text.replace('_', " "));
        }
        schema
    }

    fn reference(&mut self, name: &str) -> Value {
        with_dependencies(name, &mut self.defs);
        json!({"$ref": format!("#/$defs/{name}")})
    }

    /// A leaf value: (property name, schema).
    fn leaf(&mut self) -> (String, Value) {
        match self.rng.below(100) {
            0..=27 => {
                let n = *self.rng.pick(STRING_NAMES);
                (n.into(), self.describe(json!({"type": "string"}), n))
            }
            28..=39 => {
                let (n, vals) = *self.rng.pick(ENUMS);
                (
                    n.into(),
                    self.describe(json!({"type": "string", "enum": vals}), n),
                )
            }
            40..=49 => {
                let n = *self.rng.pick(INT_NAMES);
                (n.into(), self.describe(json!({"type": "integer"}), n))
            }
            50..=57 => {
                let n = *self.rng.pick(NUM_NAMES);
                (n.into(), self.describe(json!({"type": "number"}), n))
            }
            58..=67 => {
                let n = *self.rng.pick(BOOL_NAMES);
                (n.into(), json!({"type": "boolean"}))
            }
            68..=80 => {
                let (n, f) = *self.rng.pick(FORMATTED);
                (n.into(), json!({"type": "string", "format": f}))
            }
            81..=90 => {
                let (n, p) = *self.rng.pick(PATTERNED);
                (n.into(), json!({"type": "string", "pattern": p}))
            }
            91..=94 => ("api_version".into(), json!({"const": "v2"})),
            _ => {
                // Nullable scalar.
                let n = *self.rng.pick(STRING_NAMES);
                (
                    format!("{n}_or_null"),
                    json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
                )
            }
        }
    }

    /// One property (name, schema) at nesting `depth` (0 = the arguments object).
    fn property(&mut self, depth: usize) -> (String, Value) {
        let r = self.rng.below(100);
        let deep = depth >= 2;
        if deep || r < 62 {
            return self.leaf();
        }
        match r {
            62..=71 => {
                // Array of scalars / enums / formats.
                let n = *self.rng.pick(ARRAY_NAMES);
                let (_, item) = self.leaf();
                (
                    n.into(),
                    self.describe(json!({"type": "array", "items": item}), n),
                )
            }
            72..=78 => {
                // Nested object.
                let n = *self.rng.pick(OBJECT_NAMES);
                (n.into(), self.object(depth + 1, 2, 4))
            }
            79..=83 => {
                // Array of objects.
                let n = *self.rng.pick(ARRAY_NAMES);
                let item = self.object(depth + 1, 2, 3);
                (n.into(), json!({"type": "array", "items": item}))
            }
            84..=92 => {
                // A shared definition, sometimes optional-nullable or in an array.
                let d = *self.rng.pick(DEFS);
                let reference = self.reference(d);
                match self.rng.below(3) {
                    0 => (d.into(), reference),
                    1 => (
                        format!("{d}s"),
                        json!({"type": "array", "items": reference}),
                    ),
                    _ => (d.into(), json!({"anyOf": [reference, {"type": "null"}]})),
                }
            }
            93..=95 => {
                // Alternatives of different types.
                let n = *self
                    .rng
                    .pick(&["value", "identifier", "when", "target_value"]);
                let alt = match self.rng.below(3) {
                    0 => json!({"anyOf": [{"type": "string"}, {"type": "number"}]}),
                    1 => {
                        json!({"anyOf": [{"type": "string", "format": "uuid"}, {"type": "integer"}]})
                    }
                    _ => {
                        json!({"anyOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"}]})
                    }
                };
                (n.into(), alt)
            }
            96..=97 => {
                // A matrix: array of arrays.
                (
                    "matrix".into(),
                    json!({"type": "array", "items": {"type": "array", "items": {"type": "number"}}}),
                )
            }
            _ => {
                let reference = self.reference_recursive();
                ("category_tree".into(), reference)
            }
        }
    }

    fn reference_recursive(&mut self) -> Value {
        if !self.defs.iter().any(|d| d == "category") {
            self.defs.push("category".into());
        }
        json!({"$ref": "#/$defs/category"})
    }

    fn object(&mut self, depth: usize, min: usize, max: usize) -> Value {
        let n = self.rng.range(min, max);
        let mut props = Map::new();
        let mut tries = 0;
        while props.len() < n && tries < 50 {
            tries += 1;
            let (name, schema) = self.property(depth);
            if !props.contains_key(&name) {
                props.insert(name, schema);
            }
        }
        let names: Vec<String> = props.keys().cloned().collect();
        // At least one required property; about half of the others required too.
        let first = self.rng.below(names.len());
        let required: Vec<Value> = names
            .iter()
            .enumerate()
            .filter(|(i, _)| *i == first || self.rng.chance(0.45))
            .map(|(_, n)| Value::String(n.clone()))
            .collect();
        closed_object(Value::Object(props), Value::Array(required))
    }
}

/// `count` tool schemas (the `parameters` of function tools) with names, from `seed`.
/// Returns `(tool name, parameters schema)` pairs.
pub fn generate(count: usize, seed: u64) -> Vec<(String, Value)> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(count);
    let mut used = std::collections::HashSet::new();
    while out.len() < count {
        let name = format!("{}_{}", rng.pick(VERBS), rng.pick(NOUNS));
        let name = if used.contains(&name) {
            format!("{name}_{}", out.len())
        } else {
            name
        };
        used.insert(name.clone());
        let mut gen = Gen {
            rng: &mut rng,
            defs: Vec::new(),
        };
        let mut params = gen.object(0, 1, 8);
        if !gen.defs.is_empty() {
            let mut defs = Map::new();
            let mut names = gen.defs.clone();
            names.sort();
            for d in names {
                defs.insert(d.clone(), definition(&d));
            }
            params["$defs"] = Value::Object(defs);
        }
        out.push((name, params));
    }
    out
}

/// The file form: `[{"name", "description", "parameters"}]` (OpenAI function shape).
pub fn to_file(tools: &[(String, Value)]) -> String {
    let list: Vec<Value> = tools
        .iter()
        .map(|(name, params)| {
            json!({
                "name": name,
                "description": format!("{} (generated for the benchmark)", name.replace('_', " ")),
                "parameters": params
            })
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&Value::Array(list)).expect("serializable");
    text.push('\n');
    text
}
