import pytest


@pytest.mark.asyncio
async def test_catalog_is_served_as_catalog(datasette):
    response = await datasette.client.get("/catalog/papers.json?_shape=array&_size=1")
    assert response.status_code == 200
    assert len(response.json()) == 1
