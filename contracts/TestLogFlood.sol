// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Emits logs that carry only the ERC-1155 `TransferSingle` topic0, with no parties and no data:
/// what anyone can send to make one block's NFT logs larger than a client or a node will answer,
/// although none of them moves a token.
contract TestLogFlood {
    bytes32 private constant TRANSFER_SINGLE = keccak256("TransferSingle(address,address,address,uint256,uint256)");

    function flood(uint256 count) external {
        bytes32 topic = TRANSFER_SINGLE;
        assembly {
            for {
                let i := 0
            } lt(i, count) {
                i := add(i, 1)
            } {
                log1(0, 0, topic)
            }
        }
    }
}
