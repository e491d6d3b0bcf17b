# memcluster's stand-in for mem0.memory.setup: the client only asks it for a local user id and telemetry
# aliases; nothing is written to the home directory here.
def setup_config():
    pass


def get_user_id():
    return "memcluster-test"


def read_anon_ids():
    return {}


def is_aliased(anon_id, email):
    return True


def mark_aliased(anon_id, email):
    pass
