"""The workers registered with a `tf.data` service dispatcher (a job on a
dispatcher without workers waits for one forever, silently).

Private API (TensorFlow): the dispatcher's internal gRPC method `GetWorkers` of
`tensorflow.data.DispatcherService` (tensorflow/core/data/service/dispatcher.proto),
whose messages are declared here: the wheel ships no Python bindings for them."""

import grpc
from google.protobuf import descriptor_pb2
from google.protobuf import descriptor_pool
from google.protobuf import message_factory

GET_WORKERS = "/tensorflow.data.DispatcherService/GetWorkers"


def _messages():
    """`GetWorkersRequest` and `GetWorkersResponse`, in a pool of their own (never clashing with TensorFlow's)."""
    file = descriptor_pb2.FileDescriptorProto(
        name="keras_bert3_dispatcher_workers.proto", package="tensorflow.data", syntax="proto3"
    )
    worker_info = file.message_type.add(name="WorkerInfo")
    worker_info.field.add(
        name="address",
        number=1,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
    )
    worker_info.field.add(
        name="id",
        number=2,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
    )
    file.message_type.add(name="GetWorkersRequest")
    response = file.message_type.add(name="GetWorkersResponse")
    response.field.add(
        name="workers",
        number=1,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
        label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED,
        type_name=".tensorflow.data.WorkerInfo",
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return tuple(
        message_factory.GetMessageClass(pool.FindMessageTypeByName(f"tensorflow.data.{name}"))
        for name in ("GetWorkersRequest", "GetWorkersResponse")
    )


_REQUEST, _RESPONSE = _messages()


def registered_workers(address: str, timeout: float = 5.0) -> list[str]:
    """The addresses of the workers registered with the dispatcher at "host:port";
    `grpc.RpcError` where it does not answer within `timeout` seconds."""
    with grpc.insecure_channel(address) as channel:
        get_workers = channel.unary_unary(
            GET_WORKERS, request_serializer=_REQUEST.SerializeToString, response_deserializer=_RESPONSE.FromString
        )
        return [worker.address for worker in get_workers(_REQUEST(), timeout=timeout).workers]
