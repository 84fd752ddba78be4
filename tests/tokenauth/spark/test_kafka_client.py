"""The options the helper injects authenticate the Kafka client Spark uses.

Spark's Kafka source hands the Kafka client every ``kafka.``-prefixed option
of the reader, prefix stripped (``KafkaSourceProvider``). Here the options are
set on real PySpark readers and writers, read back out of the JVM builder,
stripped the same way, and given to Kafka's own ``Admin`` client inside
Spark's JVM, which describes our endpoint's cluster with the token.
"""

from __future__ import annotations

from typing import Any

import pytest

from sasl_scram.config import ClientConfig
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import RunningEndpoint
from tokenauth import DelegationToken
from tokenauth import DelegationTokenClient
from tokenauth.spark import JAAS_OPTION
from tokenauth.spark import JaasConflictError
from tokenauth.spark import KafkaOptions
from tokenauth.spark import apply_kafka_options
from tokenauth.spark import existing_option
from tokenauth.spark import kafka_options
from tokenauth.spark import secret_login

pytestmark = pytest.mark.jvm


def alice_client(endpoint: RunningEndpoint) -> DelegationTokenClient:
    config: ClientConfig = secret_login(
        endpoint.bootstrap, *ALICE, mechanism="SCRAM-SHA-256", security_protocol="SASL_PLAINTEXT"
    )
    return DelegationTokenClient.connect(config)


def jvm_kafka_params(spark: Any, builder: Any) -> dict[str, str]:
    """What Spark's Kafka source would pass to the Kafka client for ``builder``.

    Reads every option of the JVM reader/writer (its ``extraOptions``), then
    keeps the ``kafka.`` ones, prefix dropped, as ``KafkaSourceProvider`` does.
    """
    from tokenauth.spark._options import _jvm_extra_options

    jbuilder = getattr(builder, "_jreader", None) or builder._jwrite
    extra_options: Any = _jvm_extra_options(jbuilder)
    scala_map = extra_options.originalMap()
    java_map = spark._jvm.scala.jdk.javaapi.CollectionConverters.asJava(scala_map)
    return {
        str(k)[len("kafka.") :]: str(v)
        for k, v in java_map.items()
        if str(k).lower().startswith("kafka.")
    }


def describe_cluster(spark: Any, params: dict[str, str]) -> tuple[str, int]:
    """Kafka's Admin client in Spark's JVM: (cluster id, node count)."""
    jvm = spark._jvm
    props = jvm.java.util.Properties()
    for k, v in params.items():
        props.setProperty(k, v)
    admin = jvm.org.apache.kafka.clients.admin.Admin.create(props)
    try:
        result = admin.describeCluster()
        unit = jvm.java.util.concurrent.TimeUnit.SECONDS
        cluster_id = result.clusterId().get(20, unit)
        nodes = result.nodes().get(20, unit)
        return str(cluster_id), int(nodes.size())
    finally:
        admin.close(jvm.java.time.Duration.ofSeconds(2))


def root_cause(exc: BaseException) -> str:
    java = exc.java_exception  # type: ignore[attr-defined]
    while java.getCause() is not None:
        java = java.getCause()
    return str(java.getClass().getName())


def test_injected_options_authenticate_kafkas_client_in_spark_jvm(
    spark: Any, token_endpoint: tuple[RunningEndpoint, Any]
) -> None:
    endpoint, _ = token_endpoint
    with alice_client(endpoint) as client:
        token: DelegationToken = client.create_token()
    options = kafka_options(token, endpoint.bootstrap, security_protocol="SASL_PLAINTEXT")

    reader = apply_kafka_options(
        spark.readStream.format("kafka").option("subscribe", "events"), options
    )
    params = jvm_kafka_params(spark, reader)
    assert params == options.client_properties()
    assert params["sasl.jaas.config"] == (
        "org.apache.kafka.common.security.scram.ScramLoginModule required tokenauth=true "
        f'username="{token.token_id}" password="{token.hmac_base64}";'
    )
    cluster_id, nodes = describe_cluster(spark, params)
    assert cluster_id and nodes >= 1

    # Once the token is expired, the very same client configuration fails to log in.
    with alice_client(endpoint) as client:
        client.expire_token(token.hmac)
    with pytest.raises(Exception) as info:
        describe_cluster(spark, params)
    assert root_cause(info.value) == ("org.apache.kafka.common.errors.SaslAuthenticationException")


def test_sha256_and_the_four_builder_kinds(
    spark: Any, token_endpoint: tuple[RunningEndpoint, Any]
) -> None:
    endpoint, _ = token_endpoint
    with alice_client(endpoint) as client:
        token = client.create_token()
    options = kafka_options(
        token, endpoint.bootstrap, mechanism="SCRAM-SHA-256", security_protocol="SASL_PLAINTEXT"
    )
    batch_df = spark.range(1)
    stream_df = spark.readStream.format("rate").load()
    builders = {
        "DataFrameReader": spark.read.format("kafka"),
        "DataFrameWriter": batch_df.write.format("kafka"),
        "DataStreamReader": spark.readStream.format("kafka"),
        "DataStreamWriter": stream_df.writeStream.format("kafka"),
    }
    for name, builder in builders.items():
        assert type(builder).__name__ == name
        assert existing_option(builder, JAAS_OPTION) is None
        same = apply_kafka_options(builder, options)
        assert same is builder
        params = jvm_kafka_params(spark, builder)
        assert params == options.client_properties(), name
        # Applying the same options again is not a conflict.
        apply_kafka_options(builder, options)
    assert describe_cluster(spark, jvm_kafka_params(spark, builders["DataStreamWriter"]))[1] >= 1


def test_refuses_to_overwrite_a_user_set_login(spark: Any) -> None:
    from tests.support.clock import FakeClock
    from tests.tokenauth.spark.fakes import FakeBroker

    token = FakeBroker(FakeClock.epoch_ms()).connect().create_token()
    options = kafka_options(token, "broker:9093")
    user_login = (
        'org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" '
        'password="bob-secret";'
    )
    for builder in (
        spark.readStream.format("kafka").option("KAFKA.SASL.JAAS.CONFIG", user_login),
        spark.read.format("kafka").option(JAAS_OPTION, user_login),
        spark.range(1).write.option(JAAS_OPTION, user_login),
        spark.readStream.format("rate").load().writeStream.option(JAAS_OPTION, user_login),
    ):
        with pytest.raises(JaasConflictError) as info:
            apply_kafka_options(builder, options)
        assert "bob-secret" not in str(info.value) and token.hmac_base64 not in str(info.value)
        assert existing_option(builder, JAAS_OPTION) == user_login  # untouched
        apply_kafka_options(builder, options, overwrite=True)
        assert existing_option(builder, JAAS_OPTION) == options[JAAS_OPTION]


def test_options_repr_hides_the_secret() -> None:
    from tests.support.clock import FakeClock
    from tests.tokenauth.spark.fakes import FakeBroker

    token = FakeBroker(FakeClock.epoch_ms()).connect().create_token()
    options = kafka_options(token, "b:1", extra={"ssl.truststore.password": "tspw"})
    assert isinstance(options, KafkaOptions)
    text = repr(options) + str(options)
    assert token.hmac_base64 not in text and "tspw" not in text
    assert "kafka.sasl.jaas.config" in text and token.token_id in text
