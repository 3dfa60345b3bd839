"""etcd's v3 API messages (the part kconsole calls), generated from ``etcd.proto`` by ``generate.py``."""
