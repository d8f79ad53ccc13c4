"""One plugin, one entry point, one row: plugins/hooks.py implements each hook once and reaches
every concern module's hook function."""

import importlib
import importlib.metadata
import inspect
import pkgutil

import datasette.hookspecs
import pytest

from .plugin_files import PACKAGE, load_plugin

HOOK_NAMES = {
    name
    for name, spec in inspect.getmembers(datasette.hookspecs, inspect.isfunction)
    if hasattr(spec, "datasette_spec")
}
NOT_CONCERNS = {"hooks"}


def concern_modules():
    package = importlib.import_module(PACKAGE)
    return [
        load_plugin(module.name)
        for module in pkgutil.iter_modules(package.__path__)
        if module.name not in NOT_CONCERNS
    ]


def test_the_distribution_registers_one_entry_point():
    ours = [
        entry
        for entry in importlib.metadata.entry_points(group="datasette")
        if entry.dist is not None and entry.dist.name == "paper-catalog"
    ]
    assert [entry.value for entry in ours] == [PACKAGE]


def test_every_concern_modules_hook_function_is_reached():
    hooks = load_plugin("hooks")
    reached = {concern for concerns in hooks.CONCERNS.values() for concern in concerns}
    missing = [
        f"{module.__name__}.{name}"
        for module in concern_modules()
        for name, function in inspect.getmembers(module, inspect.isfunction)
        if name in HOOK_NAMES and function.__module__ == module.__name__ and function not in reached
    ]
    assert missing == []


def test_each_concern_serves_the_hook_it_is_named_after():
    hooks = load_plugin("hooks")
    for hook, concerns in hooks.CONCERNS.items():
        if hook not in HOOK_NAMES:
            assert hook in hooks.ONLY_IN_065
            continue
        for concern in concerns:
            assert concern.__name__ == hook, (hook, concern)
            # a concern takes only arguments its hook has
            assert set(hooks.parameters(concern)) <= set(
                inspect.signature(getattr(datasette.hookspecs, hook)).parameters
            ), concern


def test_no_concern_module_is_a_plugin_of_its_own():
    for module in concern_modules():
        marked = [
            name
            for name, function in inspect.getmembers(module, inspect.isfunction)
            if hasattr(function, "datasette_impl") and function.__module__ == module.__name__
        ]
        assert marked == [], module.__name__


@pytest.mark.asyncio(loop_scope="session")
async def test_plugins_page_lists_one_plugin_with_its_hooks(datasette):
    response = await datasette.client.get("/-/plugins.json")
    ours = [plugin for plugin in response.json() if plugin["name"] == "paper-catalog"]
    assert len(ours) == 1
    assert ours[0]["templates"] and ours[0]["static"]
    hooks = load_plugin("hooks")
    assert set(ours[0]["hooks"]) == set(hooks.CONCERNS)


def test_the_package_registers_each_implemented_hook():
    package = importlib.import_module(PACKAGE)
    registered = {
        name
        for name, function in inspect.getmembers(package, inspect.isfunction)
        if hasattr(function, "datasette_impl")
    }
    assert registered == set(load_plugin("hooks").CONCERNS)
