# memcluster's stand-in for mem0/__init__.py: upstream's imports the whole self-hosted Memory stack (vector
# stores, LLMs); the platform client needs none of it.
