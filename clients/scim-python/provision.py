"""Provisions users and groups on a gateway's /scim/v2 with scim2-client.

Usage: python provision.py BASE_URL TOKEN TAG, BASE_URL being the gateway's
/scim/v2, TOKEN a provisioning client's (gateway scim token create) and
TAG a few letters and digits that make every name and externalId unique
(a store shared by several runs).
It does what an identity provider does, through the library's models
built from the gateway's own discovery (/ResourceTypes, /Schemas,
/ServiceProviderConfig), and checks every answer:

- creates two users (one whose userName is an e-mail address, with the
  enterprise extension; one whose userName is a username) and a third;
- finds users by filter (userName eq, externalId eq);
- creates a department with a member, a sub-department of it (the
  gateway's Group extension: kind, parent) and a role group (kind role,
  priority 7) with two members;
- moves a user into the sub-department (PATCH add member) and takes them
  out of the role (PATCH remove with a value filter path);
- deactivates a user (PATCH active false), replaces another (PUT, with
  If-Match from its version) and sees a stale version refused (412);
- deletes the third user and sees 404 for them afterwards.

It prints the ids it made as one JSON object on standard output, for the
caller to check the gateway's state through GraphQL. Any unexpected answer
raises: the exit status is non-zero.
"""

import json
import sys

import httpx2
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_models import Error, PatchOp, PatchOperation, SearchRequest

ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
GATEWAY_GROUP = "urn:weibohbase:params:scim:schemas:extension:gateway:2.0:Group"


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def main(base, token, tag):
    http = httpx2.Client(base_url=base, headers={"Authorization": "Bearer " + token}, timeout=60)
    scim = SyncSCIMClient(http)
    scim.discover()

    config = scim.provider.config
    check(config.patch.supported, "ServiceProviderConfig: patch not supported")
    check(config.filter.supported and config.filter.max_results == 200, f"ServiceProviderConfig filter: {config.filter}")
    check(config.etag.supported, "ServiceProviderConfig: etag not supported")
    check(not config.bulk.supported, "ServiceProviderConfig: bulk supported")

    User = scim.get_resource_model("User")
    Group = scim.get_resource_model("Group")
    Enterprise = User.get_extension_models()[ENTERPRISE]
    GatewayGroup = Group.get_extension_models()[GATEWAY_GROUP]

    # Users, as an identity provider creates them.
    alice = User(
        user_name=f"test.user.{tag}@okta.local",
        external_id=f"00u1alice{tag}",
        display_name="Test User",
        name={"given_name": "Test", "family_name": "User"},
        emails=[{"value": "test.user@example.com", "type": "work", "primary": True}],
        active=True,
    )
    alice[Enterprise] = Enterprise(employee_number="701984", department="Engineering")
    alice = scim.create(alice)
    check(alice.id and alice.user_name == f"test.user.{tag}@okta.local", f"created alice: {alice}")
    check(alice[Enterprise].employee_number == "701984", f"alice's enterprise extension: {alice[Enterprise]}")
    check(alice.meta.version and alice.meta.version.startswith('W/"'), f"alice's version: {alice.meta.version}")

    bob = scim.create(User(user_name=f"bob_{tag}", external_id=f"00u1bob{tag}", display_name="Bob", active=True))
    carol = scim.create(User(user_name=f"Carol.{tag}@okta.local", active=True))

    found = scim.query(User, query_parameters=SearchRequest(filter=f'userName eq "TEST.USER.{tag}@okta.local"'))
    check(found.total_results == 1 and found.resources[0].id == alice.id, f"userName eq: {found}")
    found = scim.query(User, query_parameters=SearchRequest(filter=f'externalId eq "00u1bob{tag}"'))
    check(found.total_results == 1 and found.resources[0].id == bob.id, f"externalId eq: {found}")

    # Groups: a department with a member, a sub-department, a role.
    eng = Group(display_name=f"Engineering {tag}", external_id=f"grp-eng-{tag}", members=[{"value": alice.id}])
    eng[GatewayGroup] = GatewayGroup(kind="department")
    eng = scim.create(eng)
    check(eng.id.startswith("department:") and [m.value for m in eng.members or []] == [alice.id], f"created Engineering: {eng}")

    platform = Group(display_name=f"Platform {tag}", external_id=f"grp-platform-{tag}")
    platform[GatewayGroup] = GatewayGroup(kind="department", parent=eng.id)
    platform = scim.create(platform)
    check(platform[GatewayGroup].parent == eng.id, f"Platform's parent: {platform[GatewayGroup]}")

    editors = Group(display_name=f"Editors {tag}", external_id=f"grp-editors-{tag}", members=[{"value": alice.id}, {"value": bob.id}])
    editors[GatewayGroup] = GatewayGroup(kind="role", priority=7)
    editors = scim.create(editors)
    check(editors.id.startswith("role:") and editors[GatewayGroup].priority == 7, f"created Editors: {editors}")

    # Members by PATCH: bob moves into Platform, then leaves Editors.
    scim.modify(Group, platform.id, PatchOp[Group](operations=[
        PatchOperation(op="add", path="members", value=[{"value": bob.id}]),
    ]))
    scim.modify(Group, editors.id, PatchOp[Group](operations=[
        PatchOperation(op="remove", path=f'members[value eq "{bob.id}"]'),
    ]))
    editors = scim.query(Group, editors.id)
    check([m.value for m in editors.members or []] == [alice.id], f"Editors' members after the remove: {editors.members}")
    bob = scim.query(User, bob.id)
    check(sorted(g.value for g in bob.groups or []) == [platform.id], f"bob's groups: {bob.groups}")

    # alice deactivated; bob replaced with his version, then with a stale one.
    scim.modify(User, alice.id, PatchOp[User](operations=[PatchOperation(op="replace", path="active", value=False)]))
    alice = scim.query(User, alice.id)
    check(alice.active is False, f"alice after deactivation: {alice.active}")
    stale = bob.model_copy(deep=True)
    bob.display_name = "Bob Builder"
    bob = scim.replace(bob)
    check(bob.display_name == "Bob Builder", f"replaced bob: {bob}")
    stale.display_name = "Bob the Stale"
    refused = scim.replace(stale, raise_scim_errors=False)
    check(isinstance(refused, Error) and refused.status == 412, f"a replace with a stale version: {refused}")

    # carol deleted: closed, then unknown to SCIM.
    scim.delete(User, carol.id)
    gone = scim.query(User, carol.id, raise_scim_errors=False)
    check(isinstance(gone, Error) and gone.status == 404, f"carol after delete: {gone}")

    print(json.dumps({
        "alice": alice.id, "bob": bob.id, "carol": carol.id,
        "engineering": eng.id, "platform": platform.id, "editors": editors.id,
    }))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
