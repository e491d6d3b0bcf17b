# memcluster's stand-in for mem0.memory.telemetry: no telemetry leaves the test.
class _NoTelemetry:
    posthog = None

    def capture_identify(self, anon_id, email):
        return False


client_telemetry = _NoTelemetry()


def capture_client_event(event_name, instance, additional_data=None):
    pass
