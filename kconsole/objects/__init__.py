"""objects layer: stdlib-only helpers over plain-dict Kubernetes objects; see ../shared/DESIGN.md.

Import from the module (``from kconsole.objects.quantity import cpu_millis``). Index:

meta — metadata and conditions
    name(o) namespace(o) uid(o) labels(o) annotations(o) resource_version(o) generation(o)
    set_label(o, k, v) set_annotation(o, k, v) creation_timestamp(o) deletion_timestamp(o) -> float|None
    is_being_deleted(o) owner_references(o) controller_of(o) -> ref|None is_controlled_by(o, owner)
    owner_ref(owner, controller=True, block_owner_deletion=True) -> dict
    object_key(o) -> "ns/name"|"name"  split_key(key) -> (ns, name)  api_group_version(o|str) -> (group, version)
    finalizers(o) has_finalizer(o, f) add_finalizer(o, f) -> changed remove_finalizer(o, f) -> changed
    get_condition(status|obj, type) -> dict|None  condition_status(status|obj, type) -> "True"|"False"|"Unknown"|""
    set_condition(status|obj, type, status, reason="", message="", now=None, observed_generation=None) -> changed
    remove_condition(status|obj, type) -> changed
    deep_copy(value)  format_time(s) format_micro_time(s) parse_time(rfc3339) -> float

quantity — resource.Quantity semantics (exact; rounded up to nano units)
    parse_quantity(str|int|float|Fraction) -> Fraction  (QuantityError(ValueError): .text, .reason)
    quantity_format(str) -> "DecimalSI"|"BinarySI"|"DecimalExponent"  is_quantity(x) -> bool
    milli_value(q) value(q) cpu_millis(q) memory_bytes(q) resource_amount(resource, q) -> int (rounded up)
    format_quantity(q, fmt=None) -> canonical str ("1.5Gi" -> "1536Mi", 0.5 -> "500m", 1073741824 -> "1Gi")
    add_resource_lists(*rls) subtract_resource_lists(a, b) max_resource_lists(*rls) -> dict[str, Fraction]
    insufficient_resources(requests, allocatable) -> sorted names  fits(requests, allocatable) -> bool
    format_resource_list(rl, fmt=None) -> dict[str, str]  resource_list_amounts(rl) -> dict[str, int]
    sum_quantities(iterable) -> Fraction

selectors — label, node and field selectors (SelectorError(ValueError): .message, .text, .position)
    parse_label_selector(str) -> LabelSelector(.requirements .empty .nothing .matches(labels)
        .matches_object(o) .to_string() .requires_exact(key))   EVERYTHING  NOTHING
    new_requirement(key, op, values) -> Requirement(.matches(labels))  selector_from_set(dict)
    from_label_selector_dict(spec|None) -> LabelSelector   (None -> NOTHING, {} -> EVERYTHING)
    NodeSelector(spec).matches(node) .errors  compile_node_selector_term(term)  node_selector_term_matches(term, node)
    parse_field_selector(str) -> FieldSelector(.terms .empty .matches(obj, getter=None, kind=None)
        .requires_exact(path) .check_supported(kind) .to_string())
    parse_field_selector_for(kind, str)  field_value(obj, path, kind=None) -> str  SUPPORTED_FIELDS[kind]
    supported_fields(kind)  escape_field_value(v)

patch — RFC 7386 merge patch
    apply_merge_patch(target, patch) create_merge_patch(original, modified) deep_equal(a, b)
    is_noop_merge_patch(target, patch)

pod — pods, nodes, taints (cpu in millicores, others in whole units)
    pod_phase(p) is_terminal(p) is_pod_active(p) is_pod_ready(p) is_pod_available(p, min_ready_s, now)
    is_pod_scheduled(p) pod_node_name(p) pod_scheduler_name(p) pod_priority(p)
    pod_requests(p, non_zero=False) pod_limits(p) node_allocatable(node) -> dict[str, int]
    host_ports(p) -> [(ip, proto, port)]  host_ports_conflict(a, b)
    tolerates(toleration, taint) tolerations_tolerate_taint(tols, taint)
    find_untolerated_taint(taints, tols, effects=None) -> taint|None  node_taints(node) taint_string(taint)
    no_execute_toleration_seconds(taints, tols) -> 0.0 (evict now) | None (forever) | seconds
    node_ready_condition(node) is_node_ready(node) is_node_unschedulable(node)
    node_zone(node) node_region(node) node_zone_key(node)
    RequiredNodeAffinity(pod).matches(node)  pod_matches_node(pod, node)

owner — owner-reference graph (edits in place, return whether changed)
    owner_uids(o) has_owner(o, uid) is_orphan(o) set_controller_ref(o, owner) (AlreadyControlledError)
    remove_owner_ref(o, uid) dependents_index(objs) -> {uid: [obj]} controlled_by(objs, owner)

names — validation in upstream wording (each returns list[str] of errors) and generated names
    is_dns1123_label is_dns1123_subdomain is_dns1035_label is_qualified_name is_valid_label_value
    is_valid_path_segment_name validate_labels(labels) validate_annotations(annotations)
    generate_name(prefix, rng) pod_template_hash(template, collision_count=None) safe_encode_string fnv32a

duration — kubectl's time texts
    format_age(s) (HumanDuration) format_short_age(s) age_since(rfc3339|None, now)
    format_last_seen(last_age, count, first_age) event_last_seen(event, now) event_last_time(event)
    parse_duration(go_str) -> seconds  format_duration(seconds) -> go_str

humanize — go-humanize's sizes, as etcdctl prints them
    human_bytes(n) -> "9 B" | "1.2 MB" | "25 kB"

printers — kubectl's server-side printer columns (kept by the HTTP front; see that module)
    printer_for(group_resource) -> Printer(.columns .cells(obj, now))  PRINTERS
"""
